"""``merge``: the JSON reports of the N shards of one run (``--shard K/N``) read, joined by
``merge_reports`` into one report and one decision, and written in the formats asked. An entry
point of the API (``review_gate.api`` re-exports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from review_gate.change import git
from review_gate.errors import UsageError
from review_gate.models import FailOn, ReviewReport
from review_gate.pipeline import arguments, recorded_run, review_request, runner
from review_gate.pipeline.recorded_run import Render

__all__ = ["merge"]


def merge(reports: Sequence[str | Path], *, cwd: str | Path | None = None, config: str | Path | None = None,
          fail_on: FailOn | None = None, outputs: Sequence[tuple[str | Render, str | Path]] = ()) -> ReviewReport:
    """Combine the JSON reports of the N shards of one run (``--shard K/N``) into one report and
    one decision; reports of another change or configuration, or a shard missing or given twice,
    are refused (InputError, exit 2)."""
    from review_gate import __version__
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.scale import merge_reports

    review_request.run_options(fail_on=fail_on, outputs=outputs)
    if isinstance(reports, (str, bytes)) or not isinstance(reports, (list, tuple)):
        raise UsageError(f"reports {arguments.shown(reports)}: not a list of paths",
                         fix="give the shards' JSON reports as a list of paths")
    for report_path in reports:
        arguments.pathlike("report", report_path)
    review_request.typed(paths={"config": config})
    root = git.repo_root(arguments.workdir(cwd))
    loaded = load_config(locate_config_dir(str(config) if config is not None else None, root))
    parts = [(str(path), merge_reports.read(Path(path))) for path in reports]
    report = merge_reports.merge(parts, loaded, run_id=runner.new_run_id(), tool_version=__version__,
                                 fail_on=fail_on)
    from review_gate.outputs import renderer

    for fmt, path in outputs:
        recorded_run.write_file(Path(path), (renderer(fmt) if isinstance(fmt, str) else fmt)(report))
    return report
