"""Scoring for punctuation and casing restoration: P/R/F1, word alignment, WER/CER, bootstrap.

Conventions follow IWSLT2011 and the papers punctum compares against. Every word carries one
label (for punctuation e.g. O/COMMA/PERIOD/QUESTION/EXCLAMATION with O the negative class; for
casing LOWER/CAP/UPPER/MIX with LOWER the negative class). All scores derive from one confusion
matrix C (rows = reference, columns = hypothesis): for each non-negative label m,
tp[m] = C[m, m], fp[m] = column sum - C[m, m], fn[m] = row sum - C[m, m]. "Overall" is the micro
average over the non-negative labels. A COMMA predicted as PERIOD is therefore an fp for PERIOD
and an fn for COMMA. Precision, recall and F1 are 0.0 when their denominator is 0. Values are
fractions in [0, 1]; callers multiply by 100 for display.

When the hypothesis words differ from the reference (ASR output), `align_words` finds a
minimum-edit word alignment and `project_labels` turns it into one (ref, hyp) label pair per
alignment operation, so that a mark on an inserted word is a false positive and a mark on a
deleted word is a false negative. docs/EVALUATION.md gives worked examples.

Modules: `classes` (PRF, ClassScores, confusion matrices), `alignment` (word alignment, WER),
`error_rates` (CER), `aligned` (scores across an alignment, mid vs final), `bootstrap` (paired
bootstrap). The package depends on numpy and the standard library only.
"""

from punctum.metrics.aligned import (
    AlignedScores,
    MidFinalScores,
    project_labels,
    score_aligned,
    score_mid_final,
)
from punctum.metrics.alignment import (
    EXACT_ALIGN_CELLS,
    MIDDLE_SPLIT_CELLS,
    Alignment,
    align_segments,
    align_words,
    word_error_rate,
)
from punctum.metrics.bootstrap import (
    BootstrapResult,
    bootstrap_unit_counts,
    paired_bootstrap,
    sentence_units,
    unit_counts,
)
from punctum.metrics.classes import PRF, ClassScores, confusion_matrix, format_table, score_labels
from punctum.metrics.error_rates import EXACT_CER_CELLS, char_error_rate

__all__ = [
    "EXACT_ALIGN_CELLS",
    "EXACT_CER_CELLS",
    "MIDDLE_SPLIT_CELLS",
    "PRF",
    "AlignedScores",
    "Alignment",
    "BootstrapResult",
    "ClassScores",
    "MidFinalScores",
    "align_segments",
    "align_words",
    "bootstrap_unit_counts",
    "char_error_rate",
    "confusion_matrix",
    "format_table",
    "paired_bootstrap",
    "project_labels",
    "score_aligned",
    "score_labels",
    "score_mid_final",
    "sentence_units",
    "unit_counts",
    "word_error_rate",
]
