"""Changing one's own password (/accounts/password_change/ and the admin's): the new password's own problems
(too short, too common, too like the username) under 「새 비밀번호」, where they belong, and checked even when
the confirmation differs. Django's form puts them under the confirmation field and, on a mismatch, says only
that the two differ."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import PasswordChangeForm


class PortalPasswordChangeForm(PasswordChangeForm):
    required_css_class = "required"  # as the admin's own form (AdminPasswordChangeForm)

    def clean(self):
        self.validate_password_for_user(self.user, "new_password1")
        if "new_password1" in self.cleaned_data:  # a mismatch is worth saying only of an acceptable password
            self.validate_passwords("new_password1", "new_password2")
        return forms.Form.clean(self)
