"""Find the submissions of a class: a folder with one entry per student, or a Gradescope export.

    subs = discover(Path("submissions"))          # or Path("assignment_123_export.zip")
    subs[0].student, subs[0].filename, subs[0].data()

Layouts:
- a folder (or a plain zip of one): each entry is a student. A folder holding `rlhf.py` or a
  notebook, or a single file `<student>.py` / `<student>.ipynb`.
- a Gradescope "export submissions" zip (or the folder it unzips to): `submission_metadata.yml`
  beside one folder per submission (`submission_<id>/`); the metadata maps each id to its
  submitters' names and emails (`:submitters: [{":name", ":email", ":sid"}]`).
A student whose entry holds no gradable file still gets a Submission, with `problem` saying why,
so the gradebook lists every student: nothing gradable, an empty file, or a link.

No link is followed: only regular files are read (a folder's symbolic links, a zip's symlink
members, fifos and devices are never opened). An entry whose file to grade is a link gets a problem
naming it and its target, so `rlhf.py -> ../../solutions/rlhf.py` is never graded as the reference.
Only the SUBMISSIONS argument itself may be a link (staff chose it).
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

METADATA = "submission_metadata.yml"
SUFFIXES = (".py", ".ipynb")
WORLD_NAMES = {"tinylm.py", "lab_helpers.py", "training.py", "run_experiments.py", "self_check.py"}


@dataclass(frozen=True)
class Submission:
    student: str        # unique, filesystem-safe: the folder DIR/<student>/ and the gradebook's key
    name: str           # the submitters' names (Gradescope), else ""
    email: str          # the submitters' emails (Gradescope), else ""
    source: Path        # the folder or zip it comes from
    member: str         # path of the submitted file inside `source` (posix), "" when none was found
    problem: str = ""   # why nothing can be graded (no rlhf.py or notebook, an empty file, a link), else ""
    sid: str = ""       # the submitters' student ids (Gradescope `:sid:`), else ""

    @property
    def filename(self) -> str:
        return PurePosixPath(self.member).name if self.member else ""

    def data(self) -> bytes:
        """The submitted file's bytes (a regular file: a link is refused with OSError)."""
        if self.source.is_dir():
            return read_regular(self.source, self.member)
        with zipfile.ZipFile(self.source) as archive:
            return archive.read(self.member)


def read_regular(root: Path, member: str) -> bytes:
    """The bytes of `root/member`, opened without following a link at its last step, nor reading
    anything outside `root` through a linked folder."""
    path = Path(root) / member
    if path.parent.resolve() != (Path(root).resolve() / member).parent:
        raise OSError(f"{member}: a folder on its path is a link")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{member} is not a regular file")
        return f.read()


def discover(source: Path, skip: Path | None = None) -> list[Submission]:
    """Every submission under `source` (a folder or a zip), sorted by student; `skip`: a folder to leave out
    (the output folder, when it lies inside `source`)."""
    source = Path(source)
    if source.is_dir():
        files, links = _walk(source, skip)
        metadata = _metadata_path(files)
        meta = _load_metadata(read_regular(source, metadata)) if metadata is not None else None
    elif zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir() and _safe(i.filename)]
            links = {i.filename: _zip_link_target(archive, i) for i in infos if _is_zip_link(i)}
            files = sorted(i.filename for i in infos if i.filename not in links)
            metadata = _metadata_path(files)
            meta = _load_metadata(archive.read(metadata)) if metadata is not None else None
    else:
        raise FileNotFoundError(f"{source} is neither a folder nor a zip file")
    return _assemble(source, files, links, metadata, meta)


def _walk(source: Path, skip: Path | None) -> tuple[list[str], dict[str, str]]:
    """(regular files, {link or other non-regular entry: what it points to}) under `source`, as posix
    paths relative to it; links to folders are listed, never entered; `skip` is left out."""
    skip = skip.resolve() if skip is not None else None
    files, links = [], {}
    for folder, dirs, names in os.walk(source, followlinks=False):
        here = Path(folder)
        for d in list(dirs):
            if (here / d).is_symlink():
                links[(here / d).relative_to(source).as_posix()] = os.readlink(here / d)
                dirs.remove(d)
            elif skip is not None and (here / d).resolve() == skip:
                dirs.remove(d)
        for name in names:
            rel = (here / name).relative_to(source).as_posix()
            mode = os.lstat(here / name).st_mode
            if stat.S_ISREG(mode):
                files.append(rel)
            else:
                links[rel] = os.readlink(here / name) if stat.S_ISLNK(mode) else "not a regular file"
    return sorted(files), links


def _is_zip_link(info: zipfile.ZipInfo) -> bool:
    """A zip member that is not a regular file (unix mode in the high bits; a symlink, a fifo...)."""
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no type recorded (zipfile.writestr, Windows tools)
    return info.create_system == 3 and kind not in (0, stat.S_IFREG)


def _zip_link_target(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    if stat.S_ISLNK(info.external_attr >> 16) and info.file_size <= 4096:
        return archive.read(info).decode(errors="replace")
    return "not a regular file"


def _assemble(source: Path, files: list[str], links: dict[str, str], metadata: str | None,
              meta: dict | None) -> list[Submission]:
    paths = sorted(f for f in [*files, *links] if not _ignored(f))
    if metadata is not None:
        entries = _gradescope_entries(paths, metadata, meta or {})
    else:
        entries = _folder_entries(paths, links, strip_wrapper=not source.is_dir())
    taken: set[str] = set()
    subs = []
    for key, (name, email, sid), members, single in entries:
        student = _unique(_safe_name(key), taken)
        member = single or _choose(members)
        if member in links:
            problem, member = _link_problem(member, links[member]), None
        elif member:
            problem = _empty_problem(source, member)
        else:
            problem = _no_file_problem(members)
        subs.append(Submission(student, name, email, source, member or "", problem, sid))
    return sorted(subs, key=lambda s: s.student)


def _link_problem(member: str, target: str) -> str:
    what = "not a regular file" if target == "not a regular file" else f"a symbolic link to {target}"
    return f"{member} is {what}: only regular files are graded, so nothing was graded"


def _empty_problem(source: Path, member: str) -> str:
    """'... is empty' when the file to grade holds nothing but whitespace, else ''."""
    data = Submission("", "", "", source, member).data()
    return "" if data.strip() else f"{PurePosixPath(member).name} is empty"


def _folder_entries(files: list[str], links: dict[str, str], strip_wrapper: bool):
    """(key, (name, email, sid), files of the entry, single file or None) for a plain folder or zip."""
    if strip_wrapper:  # a zip of one folder holding the class: look inside it
        tops = {f.split("/", 1)[0] for f in files}
        if len(tops) == 1 and all("/" in f for f in files):
            top = tops.pop()
            files = [f[len(top) + 1:] for f in files]
            prefix = top + "/"
        else:
            prefix = ""
    else:
        prefix = ""
    groups: dict[str, list[str]] = {}
    for f in files:
        head, _, rest = f.partition("/")
        if rest:
            groups.setdefault(head, []).append(prefix + f)
        elif f.endswith(SUFFIXES) or prefix + f in links:  # a student's file, or a link (to a folder?)
            yield PurePosixPath(f).stem, ("", "", ""), [prefix + f], prefix + f
    for head, members in sorted(groups.items()):
        yield head, ("", "", ""), members, None


def _gradescope_entries(files: list[str], metadata: str, meta: dict):
    root = str(PurePosixPath(metadata).parent)
    root = "" if root == "." else root + "/"
    for sub_id, info in sorted(meta.items(), key=lambda kv: str(kv[0])):
        info = info if isinstance(info, dict) else {}
        submitters = [s for s in _field(info, "submitters") or [] if isinstance(s, dict)]
        names, emails, sids = ("; ".join(str(_field(s, f) or "") for s in submitters).strip("; ")
                               for f in ("name", "email", "sid"))
        first = submitters[0] if submitters else {}
        key = str(_field(first, "email") or _field(first, "name") or _field(first, "sid") or sub_id)
        prefix = f"{root}{sub_id}/"
        yield key, (names, emails, sids), [f for f in files if f.startswith(prefix)], None


def _field(mapping: dict, name: str):
    """Gradescope writes Ruby symbols: the key `:name` (accept `name` too)."""
    return mapping.get(f":{name}", mapping.get(name))


def _choose(members: list[str]) -> str | None:
    """The file to grade in an entry: rlhf.py, else rlhf.ipynb, else a notebook, else a lone .py file."""
    def shallow_first(found: list[str]) -> str | None:
        return min(found, key=lambda f: (f.count("/"), f)) if found else None

    named = lambda n: [f for f in members if PurePosixPath(f).name == n]  # noqa: E731
    return (shallow_first(named("rlhf.py")) or shallow_first(named("rlhf.ipynb"))
            or shallow_first([f for f in members if f.endswith(".ipynb")])
            or shallow_first([f for f in members if f.endswith(".py") and PurePosixPath(f).name not in WORLD_NAMES]))


def _no_file_problem(members: list[str]) -> str:
    if not members:
        return "the submission is empty (no file at all)"
    shown = ", ".join(PurePosixPath(f).name for f in members[:5]) + (", ..." if len(members) > 5 else "")
    return f"no rlhf.py or notebook in the submission (it holds: {shown})"


def _metadata_path(files: list[str]) -> str | None:
    found = [f for f in files if PurePosixPath(f).name == METADATA and _safe(f) and not _ignored(f)]
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


def _ignored(name: str) -> bool:
    """Clutter that is never a submission: __MACOSX/, .ipynb_checkpoints/, __pycache__/, dotfiles."""
    return any(part.startswith((".", "__")) for part in PurePosixPath(name).parts)


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
