"""Findings judged before and after they count: where their lines live (``refine``, with
``path_classes``, ``placeholders``, ``rule_contexts``, ``preexisting`` and what
``surroundings`` reads), stable ``fingerprint``s, inline ``waivers``, the committed
``baseline`` and ``shared_acceptances``, agents' ``dimensions`` mapped to findings, recorded
findings judged again (``rejudge``), a review's ``review_meta`` block and the warning of an
unreviewed submodule (``submodule_notes``)."""
