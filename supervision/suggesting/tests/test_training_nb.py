"""The safety scorer's naive-Bayes-scaled columns (``training.nb_ratios``): the ratios say which columns tell a
label apart, and the scaled regression is folded back into coefficients over the plain columns, so the model
reads a turn exactly as before."""

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from supervision.suggesting.engine.training import _fit_axis, nb_ratios


def test_a_column_of_the_label_weighs_up_one_of_the_others_down_and_a_common_one_not_at_all():
    # columns: only in the label's turns, only in the others', in every turn
    matrix = sparse.csr_matrix(np.array([[1, 0, 1], [1, 0, 1], [0, 1, 1], [0, 1, 1]], dtype=np.float32))
    truth = np.array([True, True, False, False])
    ratios = nb_ratios(matrix, truth, alpha=1.0)
    assert ratios[0] > 0 > ratios[1]
    assert abs(ratios[2]) < 1e-6
    # counts, not weights: a column's TF-IDF value does not change its ratio
    assert np.allclose(nb_ratios(matrix * 3.5, truth, alpha=1.0), ratios)


def test_the_folded_coefficients_read_the_plain_columns_as_the_scaled_regression_did():
    rng = np.random.default_rng(3)
    dense = (rng.random((200, 40)) < 0.15) * rng.random((200, 40))
    y = np.zeros((200, 1), dtype=bool)
    y[:, 0] = dense[:, :5].sum(axis=1) > 0.4
    matrix = sparse.csr_matrix(dense.astype(np.float32))
    coef, intercept = _fit_axis(matrix, y, 4.0, nb_alpha=1.0)
    plain, _ = _fit_axis(matrix, y, 4.0)
    ratios = nb_ratios(matrix, y[:, 0], 1.0)
    # the same regression on the scaled columns, by hand
    by_hand = LogisticRegression(C=4.0, class_weight="balanced", solver="liblinear", dual=True, max_iter=500)
    by_hand.fit(matrix @ sparse.diags(ratios), y[:, 0])
    expected = by_hand.decision_function(matrix @ sparse.diags(ratios))
    assert np.allclose(np.asarray(matrix @ coef).ravel() + intercept[0], expected, atol=1e-4)
    assert not np.allclose(coef, plain)  # it is another fit, not the plain one
