"""The gaps a change to the gate's own files makes (``own_files.split``): an own file set it
touches (the configuration, the baseline or shared acceptances, the run state), a symbolic link on
the gate's paths, a file put where the gate's directory is, and a file of the repository the
configuration reads through a link. Each says what is not trusted and what a person does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from review_gate.models import Gap

if TYPE_CHECKING:
    from review_gate.change.own_files import Link

MAX_LISTED = 10


def link_gaps(links: list[Link], replaced: list[str]) -> list[Gap]:
    gaps = []
    for link in links:
        to = f" (to {link.target})" if link.target is not None else ""
        if link.kind == "state_changed":
            gaps.append(Gap(kind="state_changed", subject=link.path,
                            reason=f"the run-state path passes through {link.path}, a symbolic link{to}; it is not "
                                   "followed: this run uses no state (no cache, no acceptances) and records nothing",
                            suggestion=f"make {link.path} a real directory, or set an absolute state_path in "
                                       "review-gate.json"))
        else:
            gaps.append(Gap(kind="config_changed", subject=link.path,
                            reason=f"{link.path} is a symbolic link{to}; it is not followed: no configuration, "
                                   "baseline or run state is read from where it leads, and the files there are "
                                   "reviewed as code",
                            suggestion=f"make {link.path} a real directory, or name the configuration with "
                                       "--config DIR"))
    linked = {link.path for link in links}
    for path in dict.fromkeys(replaced):
        if path not in linked:
            gaps.append(Gap(kind="config_changed", subject=path,
                            reason=f"the change puts a file or a symbolic link at {path}, where review-gate keeps "
                                   "its files; it is not followed, and it is reviewed as code",
                            suggestion=f"keep {path} a real directory"))
    return gaps


def read_through_gaps(read: dict[str, str]) -> list[Gap]:
    return [Gap(kind="config_changed", subject=path,
                reason=f"the configuration in use reads its {name} from {path} (through a symbolic link, or a name "
                       "out of its directory); the change edits it: it is reviewed as code, and it can weaken the "
                       "gate that judges it",
                suggestion="have a person review this edit; keep the configuration's files in its directory "
                           "rather than links to files elsewhere in the repository")
            for path, name in read.items()]


def touched_gaps(touched: dict[tuple[str, str], list[str]], config_dir: str | None) -> list[Gap]:
    gaps = []
    for (kind, subject), paths in touched.items():
        shown = ", ".join(paths[:MAX_LISTED]) + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED
                                                  else "")
        if kind == "state_changed":
            gaps.append(Gap(kind=kind, subject=subject,
                            reason=f"the change adds or edits the run-state database ({shown}); its cache and "
                                   "acceptances are not used for this run, and it is not reviewed as code (only "
                                   "the secret rules scan what the change commits)",
                            suggestion=f"remove it from the change (git rm --cached {subject}); it is per machine "
                                       "and ignored by the .gitignore review-gate writes beside it"))
        elif kind == "baseline_changed":
            gaps.append(Gap(kind=kind, subject=subject,
                            reason=f"the change edits the baseline or the shared acceptances ({shown}); they are not "
                                   "trusted for this run: only the base side's copy waives findings",
                            suggestion="have a person review the change; it applies once it is on the base branch"))
        else:
            in_use = subject == config_dir
            what = ("the review configuration" if in_use
                    else "review-gate's own files (not the configuration this run uses)")
            count = paths[0] if len(paths) == 1 else f"{len(paths)} files"
            # the run reads the configuration where it is: the change's copy of it judges the change
            judged = ("this run is judged by the edited copy" if in_use else "it does not judge this change")
            gaps.append(Gap(kind="config_changed", subject=subject, files=list(paths),
                            reason=f"the change edits {what} ({count}); it is not reviewed as code, and {judged}",
                            suggestion="have a person review this edit; in CI, load the configuration from the "
                                       "base branch (--config DIR from a trusted checkout)"))
    return gaps
