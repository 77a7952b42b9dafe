"""Templates with slots: boilerplate with variable parts ("updated on <month> <num> <num> by"),
found across documents and counted exactly (docs: how-it-works/templates.md).

Modules: masking (typed slots), pattern (definition, text form), matching (the verifying pass,
leftmost-shortest binding), candidates (seeds and extension across free slots), select
(validity, order, absorption), slots (slot statistics), result (rows, JSONL), miner (the
SlotTemplates estimator), apply (templates into a clean mask and pattern labels).
"""

from corpus_miner.templates.miner import SlotTemplates
from corpus_miner.templates.params import TemplateParams

__all__ = ["SlotTemplates", "TemplateParams"]
