"""Find the submissions of a class: a folder with one entry per student, or a Gradescope export.

    subs = discover(Path("submissions"))          # or Path("assignment_123_export.zip")
    subs[0].student, subs[0].filename, subs[0].data()

Layouts:
- a folder (or a plain zip of one): each entry is a student. A folder (empty or not), or a single
  file `<student>.py` / `<student>.ipynb`, which is graded as it is.
- a Gradescope "export submissions" zip (or the folder it unzips to): `submission_metadata.yml`
  beside one folder per submission (`submission_<id>/`); the metadata maps each id to its
  submitters' names, emails and student ids (`:submitters: [{":name", ":email", ":sid"}]`).
Which file of an entry folder is graded is the rule every command shares (autograder/judge/discovery.py:
the submission file, else its notebook, else the one file defining contract functions). A student whose entry
holds nothing to grade still gets a Submission, with `problem` saying why in one sentence (nothing
there, an empty file, a link, several candidate files), so the gradebook lists every student.

No link is followed: only regular files are read (a folder's symbolic links, a zip's symlink
members, fifos and devices are never opened). An entry whose file to grade is a link gets a problem
naming it and its target, so a link to the reference is never graded as the reference.
Only the SUBMISSIONS argument itself may be a link (staff chose it).
"""

from __future__ import annotations

import collections
import os
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from autograder.judge.discovery import (
    AmbiguousSubmission,
    Contract,
    Listing,
    SubmissionNotFound,
    choose,
    link_problem,
    read_regular,
    skipped,
)

METADATA = "submission_metadata.yml"
SUFFIXES = (".py", ".ipynb")
MAX_DEPTH = 32   # folders below SUBMISSIONS that are entered (see _walk)


@dataclass(frozen=True)
class Member:
    """One submitter (a Gradescope group has several): what an LMS matches a grade to."""
    name: str = ""
    email: str = ""
    sid: str = ""


@dataclass(frozen=True)
class Submission:
    student: str        # unique, filesystem-safe: the folder DIR/<student>/ and the gradebook's key
    name: str           # the submitters' names (Gradescope), else ""
    email: str          # the submitters' emails (Gradescope), else ""
    source: Path        # the folder or zip it comes from
    member: str         # path of the submitted file inside `source` (posix), "" when none was found
    problem: str = ""   # why nothing can be graded (one sentence), else ""
    sid: str = ""       # the submitters' student ids (Gradescope `:sid:`), else ""
    members: tuple[Member, ...] = ()   # each submitter (Gradescope metadata), else ()
    ambiguous: bool = False            # `problem` is several candidate files, not a missing one

    @property
    def filename(self) -> str:
        return PurePosixPath(self.member).name if self.member else ""

    def data(self) -> bytes:
        """The submitted file's bytes (a regular file: a link is refused with OSError)."""
        return _read(self.source, self.member)


def _read(source: Path, member: str) -> bytes:
    if source.is_dir():
        return read_regular(source, member)
    with zipfile.ZipFile(source) as archive:
        return archive.read(member)


def discover(source: Path, skip: Path | None = None, contract: Contract | None = None,
             reserved: tuple[str, ...] = ()) -> list[Submission]:
    """Every submission under `source` (a folder or a zip), sorted by student; `skip`: a folder to leave out
    (the output folder, when it lies inside `source`); `contract`: grading.yaml's (loaded when None);
    `reserved`: names no student key takes, in any case (grade-all's own files in DIR: an entry named
    `gradebook.csv` becomes the student `gradebook.csv-2`)."""
    source = Path(source)
    if contract is None:
        from autograder.lab import config
        contract = Contract.of(config.load())
    if source.is_dir():
        files, links, folders = _walk(source, skip)
        metadata = _metadata_path(list(files))
        meta = _load_metadata(read_regular(source, metadata)) if metadata is not None else None
    elif zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            infos = [i for i in archive.infolist() if _safe(i.filename)]
            folders = {i.filename.rstrip("/") for i in infos if i.is_dir()}
            infos = [i for i in infos if not i.is_dir()]
            links = {i.filename: _zip_link_target(archive, i) for i in infos if _is_zip_link(i)}
            files = {i.filename: i.file_size for i in infos if i.filename not in links}
            folders |= {str(parent) for name in [*files, *links] for parent in PurePosixPath(name).parents
                        if str(parent) != "."}
            metadata = _metadata_path(list(files))
            meta = _load_metadata(archive.read(metadata)) if metadata is not None else None
    else:
        raise FileNotFoundError(f"{source} is neither a folder nor a zip file")
    return _assemble(source, files, links, folders, metadata, meta, contract, reserved)


def _walk(source: Path, skip: Path | None) -> tuple[dict[str, int], dict[str, str], set[str]]:
    """({regular file: size}, {link or other non-regular entry: what it points to}, {folder}) under `source`,
    as posix paths relative to it; links to folders are listed, never entered; `skip` is left out. Breadth
    first, without recursion: a folder MAX_DEPTH levels down is listed but not entered (no submission file
    lies that deep; an entry of 3,000 nested folders costs one pass, never a RecursionError)."""
    skip = skip.resolve() if skip is not None else None
    files: dict[str, int] = {}
    links: dict[str, str] = {}
    folders: set[str] = set()
    queue = collections.deque([(source, 0)])
    while queue:
        here, depth = queue.popleft()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            rel = path.relative_to(source).as_posix()
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                links[rel] = os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                if skip is not None and path.resolve() == skip:
                    continue
                folders.add(rel)
                if depth + 1 < MAX_DEPTH:
                    queue.append((path, depth + 1))
            elif stat.S_ISREG(info.st_mode):
                files[rel] = info.st_size
            else:
                links[rel] = "not a regular file"
    return files, links, folders


def _is_zip_link(info: zipfile.ZipInfo) -> bool:
    """A zip member that is not a regular file (unix mode in the high bits; a symlink, a fifo...)."""
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no type recorded (zipfile.writestr, Windows tools)
    return info.create_system == 3 and kind not in (0, stat.S_IFREG)


def _zip_link_target(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    if stat.S_ISLNK(info.external_attr >> 16) and info.file_size <= 4096:
        return archive.read(info).decode(errors="replace")
    return "not a regular file"


def _assemble(source: Path, files: dict[str, int], links: dict[str, str], folders: set[str], metadata: str | None,
              meta: dict | None, contract: Contract, reserved: tuple[str, ...] = ()) -> list[Submission]:
    files = {f: n for f, n in files.items() if not skipped(f)}
    links = {f: t for f, t in links.items() if not skipped(f)}
    folders = {f for f in folders if not skipped(f)}
    if metadata is not None:
        entries = _gradescope_entries(folders, metadata, meta or {})
    else:
        entries = _folder_entries(files, links, folders, strip_wrapper=not source.is_dir())
    taken = {name.lower() for name in reserved}
    subs = []
    for key, members, root, single in entries:
        student = _unique(_safe_name(key), taken)
        member, problem, ambiguous = _pick(source, files, links, root, single, contract)
        names, emails, sids = ("; ".join(getattr(m, f) for m in members if getattr(m, f))
                               for f in ("name", "email", "sid"))
        subs.append(Submission(student, names, emails, source, member, problem, sids, tuple(members), ambiguous))
    return sorted(subs, key=lambda s: s.student)


def _pick(source: Path, files: dict[str, int], links: dict[str, str], root: str | None, single: str | None,
          contract: Contract) -> tuple[str, str, bool]:
    """(the member to grade or "", the problem or "", whether the problem is several candidates)."""
    if single is not None:  # a file named after the student: graded as it is
        if single in links:
            return "", link_problem(single, links[single]), False
        return single, _empty_problem(source, single), False
    prefix = f"{root}/" if root else ""
    listing = Listing({f[len(prefix):]: n for f, n in files.items() if f.startswith(prefix)},
                      lambda rel: _read(source, prefix + rel),
                      {f[len(prefix):]: t for f, t in links.items() if f.startswith(prefix)})
    try:
        chosen = prefix + choose(listing, contract)
    except AmbiguousSubmission as exc:
        return "", str(exc), True
    except SubmissionNotFound as exc:
        return "", str(exc), False
    return chosen, _empty_problem(source, chosen), False


def _empty_problem(source: Path, member: str) -> str:
    """'... is empty' when the file to grade holds nothing but whitespace, else ''."""
    return "" if _read(source, member).strip() else f"{PurePosixPath(member).name} is empty"


def _folder_entries(files: dict[str, int], links: dict[str, str], folders: set[str], strip_wrapper: bool):
    """(key, members, entry folder or None, single file or None) for a plain folder or zip: every top-level
    folder is an entry (an empty one too), and so is every top-level .py, .ipynb or link."""
    prefix = ""
    if strip_wrapper:  # a zip of one folder holding the class: look inside it
        tops = {f.split("/", 1)[0] for f in [*files, *links]}
        if len(tops) == 1 and all("/" in f for f in [*files, *links]):
            prefix = tops.pop() + "/"
    for name in sorted([*files, *links]):
        rest = name[len(prefix):]
        if name.startswith(prefix) and "/" not in rest and (rest.endswith(SUFFIXES) or name in links):
            yield PurePosixPath(rest).stem, (), None, name
    for folder in sorted(folders):
        rest = folder[len(prefix):]
        if folder.startswith(prefix) and rest and "/" not in rest:
            yield rest, (), folder, None


def _gradescope_entries(folders: set[str], metadata: str, meta: dict):
    root = str(PurePosixPath(metadata).parent)
    root = "" if root == "." else root + "/"
    for sub_id, info in sorted(meta.items(), key=lambda kv: str(kv[0])):
        info = info if isinstance(info, dict) else {}
        submitters = [s for s in _field(info, "submitters") or [] if isinstance(s, dict)]
        members = [Member(*(str(_field(s, f) or "") for f in ("name", "email", "sid"))) for s in submitters]
        first = members[0] if members else Member()
        key = first.email or first.name or first.sid or str(sub_id)
        folder = f"{root}{sub_id}"
        yield key, members, folder, None


def _field(mapping: dict, name: str):
    """Gradescope writes Ruby symbols: the key `:name` (accept `name` too)."""
    return mapping.get(f":{name}", mapping.get(name))


def _metadata_path(files: list[str]) -> str | None:
    found = [f for f in files if PurePosixPath(f).name == METADATA and _safe(f) and not skipped(f)]
    return min(found, key=lambda f: f.count("/")) if found else None


class _TolerantLoader(yaml.SafeLoader):
    """Safe YAML that reads Ruby-tagged values (`!ruby/object:BigDecimal ...`) as plain data."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_TolerantLoader.add_multi_constructor("!", _plain)


def _load_metadata(text: bytes) -> dict:
    meta = yaml.load(text, Loader=_TolerantLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(meta, dict):
        raise ValueError(f"{METADATA} is not a mapping of submission ids")
    return meta


def _safe(name: str) -> bool:
    """A zip member name that stays inside the archive's tree."""
    parts = PurePosixPath(name).parts
    return not name.startswith("/") and ".." not in parts and "\\" not in name


def _safe_name(key: str) -> str:
    name = re.sub(r"[^\w.@+-]+", "_", key).strip("._")
    return name[:80] or "student"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate.lower())
    return candidate
