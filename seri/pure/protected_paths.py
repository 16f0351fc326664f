"""The paths no tool may write, whatever the rules say: the one list of them.

``.git`` (hooks run code) and ``.ssh`` by name wherever they are; seri's profile directory;
the shell start-up files and the git and fish configuration under the home directory. The
permission policy denies writes to them (``file_permissions``, ``command_permissions``), the
file tools refuse them again (``seri.io.files.refuse_protected``), and the bash sandbox binds
the ones inside the project read-only (``seri.io.sandbox``).
"""

from __future__ import annotations

import posixpath

# Shell start-up files: writing one runs code in every later shell.
RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
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
}
# Under the home directory, besides the rc files.
HOME_PROTECTED = (".ssh", ".gitconfig", ".config/git", ".config/fish")


def protected_dir(path: str, sep: str = "/") -> tuple[str, str] | None:
    """The protected directory name ``path`` passes through, and why it is protected."""
    for part in path.split(sep):
        why = PROTECTED_DIR_NAMES.get(part.lower())
        if why:
            return part, why
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
