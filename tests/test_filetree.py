"""autograder/sandbox/filetree.py: any tree a submission can build is removed without recursion and without raising.

Each tree is built and removed by one non-root owner (a forked process that drops to `nobody` when the
tests run as root: root ignores file modes, so modes are only tested as their owner), with at most 64
descriptors (RLIMIT_NOFILE), so a walk holding one per level would fail."""

from __future__ import annotations

import json
import os
import resource
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.sandbox import filetree
from autograder.sandbox.filetree import remove_tree

NOBODY = 65534
FDS = 64


@pytest.fixture
def place():
    """An empty folder the owner may write in (given to `nobody` when root), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-filetree-"))
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
    yield folder
    remove_tree(folder)


def as_owner(work: Callable[[], object]) -> object:
    """Run `work` in a forked process as its non-root owner with RLIMIT_NOFILE=64; its JSON answer comes back."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child
        code = 1
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            resource.setrlimit(resource.RLIMIT_NOFILE, (FDS, FDS))
            os.write(write, json.dumps(work()).encode())
            code = 0
        except BaseException as exc:  # noqa: BLE001 - sent to the test, which fails with it
            os.write(write, json.dumps({"raised": repr(exc)}).encode())
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks))
    assert not (isinstance(answer, dict) and "raised" in answer), answer
    return answer


def nest(root: Path, depth: int, name: str = "d") -> None:
    """`depth` folders, one inside the other, below `root` (through descriptors: the path exceeds PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("last", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
        f.write("bottom")
    os.close(fd)


def removed(tree: Path) -> Callable[[], object]:
    """The work: remove `tree`, answer [what stayed, whether the tree still exists]."""
    return lambda: [remove_tree(tree), os.path.lexists(tree)]


@pytest.mark.parametrize("depth", [3_000, pytest.param(10_000, marks=pytest.mark.slow)])
def test_deeply_nested_folders_are_removed(place, depth):
    """shutil.rmtree raises RecursionError from ~1,000 levels (Python 3.11); ~30 s of wall time to build 10,000 here."""
    tree = place / "tree"

    def work():
        tree.mkdir()
        nest(tree, depth)
        return removed(tree)()
    assert as_owner(work) == [[], False]


@pytest.mark.parametrize("count", [5_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_many_files_are_removed(place, count):
    tree = place / "tree"

    def work():
        for folder in ("a", "b"):
            (tree / folder).mkdir(parents=True)
            for i in range(count // 2):
                os.close(os.open(tree / folder / str(i), os.O_WRONLY | os.O_CREAT, 0o600))
        return removed(tree)()
    assert as_owner(work) == [[], False]


def test_folders_their_owner_cannot_read_or_change_are_removed(place):
    """0o000, write-only, read-only, search-only folders at every depth, the root itself included."""
    tree = place / "tree"

    def work():
        nest(tree.parent, 1, "tree")
        for mode in (0o000, 0o200, 0o500, 0o100, 0o400):
            folder = tree / f"m{mode:o}"
            nest(tree, 1, folder.name)
            nest(folder, 20)
            (folder / "file").write_text("x")
            (folder / "file").chmod(0o000)
            deepest = folder / "/".join(["d"] * 20)
            deepest.chmod(0o000)
            folder.chmod(mode)
        tree.chmod(0o000)
        return removed(tree)()
    assert as_owner(work) == [[], False]


def test_links_are_removed_never_followed(place):
    """Loops, links to folders above, to the tree's own parent, to files outside: only the links go."""
    outside = place / "outside"
    tree = place / "tree"

    def work():
        outside.mkdir()
        (outside / "keep").write_text("not the tree's")
        nest(tree.parent, 1, "tree")
        nest(tree, 30)
        (tree / "loop").symlink_to("loop")
        (tree / "self").symlink_to(".")
        (tree / "up").symlink_to("..")
        (tree / "d" / "ring-a").symlink_to("ring-b")
        (tree / "d" / "ring-b").symlink_to("ring-a")
        (tree / "d" / "out").symlink_to(outside)
        (tree / "d" / "root").symlink_to("/")
        (tree / "d" / "keep").symlink_to(outside / "keep")
        return [*removed(tree)(), sorted(os.listdir(outside))]
    assert as_owner(work) == [[], False, ["keep"]]


def test_a_link_given_as_the_tree_is_removed_not_its_target(place):
    target, link = place / "target", place / "link"

    def work():
        target.mkdir()
        (target / "keep").write_text("x")
        link.symlink_to(target)
        return [remove_tree(link), os.path.lexists(link), os.listdir(target)]
    assert as_owner(work) == [[], False, ["keep"]]


def test_any_name_the_file_system_holds(place):
    """Newlines, escapes, bytes that are not UTF-8, dashes, the longest name, in folders and files."""
    tree = place / "tree"
    names = [b"new\nline", b"\xff\xfe not utf-8", b"\x1b[31mred", b"-rf", b" ", b"..." , b"n" * 255, b"\\"]

    def work():
        tree.mkdir()
        fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
        for name in names:
            os.mkdir(name + b".d" if len(name) < 250 else name, dir_fd=fd)
            if len(name) < 250:
                os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
        os.close(fd)
        return removed(tree)()
    assert as_owner(work) == [[], False]


def test_what_cannot_be_removed_is_returned_and_the_rest_goes(place):
    """A folder of another owner (root's, in a tree of nobody's) keeps its file: that file is named, once; its
    folders stay; everything else is removed, and nothing raises."""
    if os.geteuid() != 0:
        pytest.skip("needs root: a folder of another owner inside the tree")
    tree = place / "tree"
    tree.mkdir()
    os.chown(tree, NOBODY, NOBODY)
    (tree / "theirs" / "deep").mkdir(parents=True)
    (tree / "theirs" / "deep" / "file").write_text("x")
    for name in ("mine", "more"):
        (tree / name).mkdir()
        (tree / name / "file").write_text("x")
        for path in (tree / name, tree / name / "file"):
            os.chown(path, NOBODY, NOBODY)
    os.chown(tree / "theirs", NOBODY, NOBODY)  # its own folder: nobody may empty it, not `deep` (root's, 0755)
    left, exists = as_owner(removed(tree))
    assert left == [str(tree / "theirs" / "deep" / "file")] and exists
    assert sorted(p.name for p in tree.iterdir()) == ["theirs"]
    assert remove_tree(tree) == [] and not tree.exists()  # root removes the rest


def test_nothing_to_remove_and_plain_files(tmp_path):
    assert remove_tree(tmp_path / "absent") == []
    (tmp_path / "file").write_text("x")
    assert remove_tree(tmp_path / "file") == [] and not (tmp_path / "file").exists()
    assert remove_tree(tmp_path / "absent" / "deeper") == []


def test_a_tree_moved_while_it_is_removed_is_not_followed(tmp_path, monkeypatch):
    """A level reopened through ".." that is no longer the folder it was (a rename mid-walk) ends the walk there:
    the tree is reported, and nothing outside it is touched."""
    monkeypatch.setattr(filetree, "WINDOW", 2)
    tree = tmp_path / "tree"
    tree.mkdir()
    nest(tree, 6)
    (tmp_path / "bystander").write_text("x")
    reopen = filetree._Removal._reopen_parent
    monkeypatch.setattr(filetree._Removal, "_reopen_parent", staticmethod(lambda child, ident: reopen(child, (0, 0))))
    left = remove_tree(tree)
    assert left and all(p.startswith(str(tree)) for p in left)
    assert (tmp_path / "bystander").exists() and tree.exists()



def test_allocated_bytes_counts_every_depth_and_follows_no_link(tmp_path):
    """Memory held in tmpfs files counts wherever they lie: a path-name walk stopped at PATH_MAX (~2,000 levels)
    and took 0.4 s of CPU for 3,000 levels; links, even to big files, count only themselves."""
    tree = tmp_path / "tree"
    tree.mkdir()
    nest(tree, 3_000)
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3_000):
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("big", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "wb") as f:
        f.write(b"\1" * (4 << 20))
    os.close(fd)
    (tmp_path / "outside").write_bytes(b"\1" * (8 << 20))
    (tree / "link").symlink_to(tmp_path / "outside")
    (tree / "loop").symlink_to(".")
    size = filetree.allocated_bytes(tree)
    assert 4 << 20 <= size < (4 << 20) + 3_001 * 8192 + (1 << 20)
    assert filetree.allocated_bytes(tmp_path / "outside") >= 8 << 20 and filetree.allocated_bytes(tmp_path / "no") == 0
    assert remove_tree(tree) == []
