"""Transcript import: reader (file → raw rows) → parser (raw row → TurnRecord + errors) → writer.

All formats share the parser, the cross-row checks and the writer; every error names its row and column.
"""
