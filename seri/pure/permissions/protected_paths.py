"""The paths no tool may write, whatever the rules say: the one list of them.

By name wherever they are: ``.git`` (hooks and config run code), ``.ssh``, ``.seri`` (seri's
project settings) and ``.mcp.json`` (it names programs seri starts). By place: seri's profile
directory; the shell start-up files (and what the common default rc files source), the git
and fish configuration under the home directory. Protected whether or not they exist:
creating one is writing one. The permission policy denies writes to them
(``file_permissions``, ``command_permissions``), the file tools refuse them again
(``seri.io.tools.files.refuse_protected``), and the bash sandbox binds the ones inside the project
read-only, an empty stand-in where one does not exist yet (``guarded_in_project``,
``seri.io.permissions.sandbox``).
"""

from __future__ import annotations

import posixpath

# Shell start-up files: writing one runs code in every later shell.
RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",  # Debian's and Ubuntu's default .bashrc source it
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    "config.fish",
)
# Directories no tool may write into, by name, wherever they are.
PROTECTED_DIR_NAMES = {
    ".git": "it holds git's hooks and config, which run code",
    ".ssh": "it holds SSH keys and authorized_keys",
    ".seri": "it holds seri's project settings (rules the model is given)",
}
# Files no tool may write, by name, wherever they are.
PROTECTED_FILE_NAMES = {
    ".mcp.json": "it names the programs seri starts as MCP servers",
}
# The protected names read at a project's top (directory or not), existing or not.
PROJECT_TOP_NAMES = ((".git", True), (".seri", True), (".mcp.json", False))
# Under the home directory, besides the rc files: directories (Fedora's default .bashrc
# sources every file in ~/.bashrc.d) and files.
HOME_PROTECTED_DIRS = (".ssh", ".config/git", ".config/fish", ".bashrc.d")
HOME_PROTECTED_FILES = (".gitconfig",)
HOME_PROTECTED = HOME_PROTECTED_DIRS + HOME_PROTECTED_FILES


def protected_dir(path: str, sep: str = "/") -> tuple[str, str] | None:
    """Where ``path`` is protected by name, and why: ``("inside .git/", ...)`` for a
    directory it passes through, ``("named .mcp.json", ...)`` for a protected file."""
    for part in path.split(sep):
        why = PROTECTED_DIR_NAMES.get(part.lower())
        if why:
            return f"inside {part}/", why
        why = PROTECTED_FILE_NAMES.get(part.lower())
        if why:
            return f"named {part}", why
    return None


def protected_paths(profile_dir: str, home: str) -> tuple[str, ...]:
    """The absolute paths no tool may write, for ``Policy.protected``.

    The caller should pass resolved (real) paths, and may add the resolved
    form as well when it differs.
    """
    paths = [profile_dir] if profile_dir else []
    if home:
        paths += [posixpath.join(home, name) for name in (*RC_FILES, *HOME_PROTECTED)]
    return tuple(posixpath.normpath(p) for p in paths)


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (lexically, POSIX paths)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def guarded_in_project(
    project: str, protected: tuple[str, ...], found_by_name: tuple[str, ...] = ()
) -> tuple[tuple[str, bool], ...]:
    """What the sandbox keeps read-only inside ``project``, existing or not: (path, is a
    directory), sorted, parents before what they hold.

    The protected names at the project's top that git and seri look for there (``.git``,
    ``.seri``, ``.mcp.json``: one that does not exist yet is where git or seri would look
    first, and a project inside a repository has no ``.git`` of its own); the protected
    absolute paths that fall inside the project (the home rc files when the project is the
    home directory, the profile); and ``found_by_name``, the protected names the caller found
    deeper in the project (a nested repository's ``.git``). A path inside another one listed
    is left out: the outer one covers it.
    """
    root = posixpath.normpath(project)
    wanted: dict[str, bool] = {}
    for name, is_dir in PROJECT_TOP_NAMES:
        wanted[posixpath.join(root, name)] = is_dir
    files = {*RC_FILES, *(posixpath.basename(f) for f in HOME_PROTECTED_FILES)}
    for given in protected:
        path = posixpath.normpath(given)
        if is_within(path, root) and path != root:
            # The rc files and .gitconfig are files; the rest (the profile, ~/.ssh) directories.
            wanted.setdefault(path, posixpath.basename(path) not in files)
    for given in found_by_name:
        path = posixpath.normpath(given)
        if is_within(path, root) and path != root:
            wanted.setdefault(path, posixpath.basename(path) in PROTECTED_DIR_NAMES)
    kept = sorted(wanted)
    outer = [p for p in kept if not any(q != p and is_within(p, q) for q in kept)]
    return tuple((p, wanted[p]) for p in outer)
