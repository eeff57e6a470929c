"""The ``review-gate`` command: ``main`` parses, dispatches to a command and maps errors to
exit codes."""
