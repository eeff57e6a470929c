"""The six stages, one module each; ``review_gate.runner`` knows their order."""
