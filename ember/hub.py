"""``ember.hub``: models published as a ``hubconf.py`` (in a directory or a GitHub
repository) and checkpoints downloaded from URLs, cached on disk, as PyTorch's ``torch.hub``.

A ``hubconf.py`` lists ``dependencies`` (module names that must be importable) and defines
entry points: its public callables. ``load(dir, name, source='local')`` imports it and calls
``name``; with ``source='github'`` the repository ``owner/name[:ref]`` is downloaded first
(network needed) into ``<hub_dir>/<owner>_<name>_<ref>`` and read from there afterwards.
The cache directory is ``$EMBER_HOME/hub`` (``EMBER_HOME`` defaults to
``$XDG_CACHE_HOME/ember``, that is ``~/.cache/ember``) unless ``set_dir`` chose another.
Checkpoints are read with ``ember.load`` (ember's own files and ``torch.save`` ones).

>>> import ember, os, tempfile
>>> repo = tempfile.mkdtemp()
>>> with open(os.path.join(repo, "hubconf.py"), "w") as f:
...     _ = f.write("dependencies = []\\ndef double(x):\\n    return 2 * x\\n")
>>> ember.hub.load(repo, "double", 21, source="local")
42
"""
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _ember_load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_EMBER_HOME = "EMBER_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


def _ember_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "ember")
    return os.path.expanduser(os.getenv(ENV_EMBER_HOME, default))


def get_dir():
    """The hub's cache directory: the one ``set_dir`` gave, else ``$EMBER_HOME/hub``.

    >>> import ember, os
    >>> ember.hub.get_dir().endswith(os.path.join("ember", "hub")) or "EMBER_HOME" in os.environ
    True
    """
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_ember_home(), "hub")


def set_dir(d):
    """Use directory ``d`` (``~`` expanded) for downloaded repositories and checkpoints.

    >>> import ember
    >>> old = ember.hub.get_dir()
    >>> ember.hub.set_dir("/tmp/ember-hub"); ember.hub.get_dir()
    '/tmp/ember-hub'
    >>> ember.hub.set_dir(old)
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _on_sys_path(path):
    """hubconf.py may import modules next to it."""
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    with _on_sys_path(repo_dir):
        spec.loader.exec_module(module)
    return module


def _module_exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _entry_point(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(module, VAR_DEPENDENCY, None) if VAR_DEPENDENCY in dir(module) else None
    if deps is not None:
        missing = [name for name in deps if not _module_exists(name)]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    fn = getattr(module, model) if model in dir(module) else None
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


# ---- GitHub repositories ---------------------------------------------------------------

def _read_url(request):
    with urlopen(request) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _split_repo(github):
    """(owner, name, ref); with no ``:ref``, GitHub is asked whether ``main`` exists
    (else ``master``), or offline, the cache is."""
    info, _, ref = github.partition(":")
    owner, name = info.split("/")
    if ref:
        return owner, name, ref
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:
        for candidate in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{candidate}")):
                return owner, name, candidate
        raise RuntimeError("It looks like there is no internet connection and the repo could "
                           f"not be found in the cache ({get_dir()})") from e


def _check_trusted(owner, name, cache_name, trust_repo):
    """``trust_repo``: True trusts (and remembers), "check" asks unless the repository is
    in ``<hub_dir>/trusted_list`` (or already downloaded), False always asks."""
    hub_dir = get_dir()
    listed_path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(listed_path):
        open(listed_path, "a").close()
    with open(listed_path) as f:
        listed = {line.strip() for line in f}
    owner_name = f"{owner}_{name}"
    downloaded = next(os.walk(hub_dir))[1]
    trusted = owner_name in listed or cache_name in downloaded or owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted "
                       "repositories and as such cannot be downloaded. Do you trust this "
                       "repository and wish to add it to the trusted list of repositories "
                       "(y/N)?").lower()
        if answer in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # PyTorch's type
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
        if trusted:
            print("The repository is already trusted.")
    if not trusted:
        with open(listed_path, "a") as f:
            f.write(owner_name + "\n")


def _check_not_a_fork(owner, name, ref):
    """The ref must be a branch, tag or commit of ``owner/name`` itself (GitHub's API)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get(ENV_GITHUB_TOKEN) is not None:
        headers["Authorization"] = f"token {os.environ[ENV_GITHUB_TOKEN]}"
    for kind in ("branches", "tags"):
        page = 1
        while True:
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                entries = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:
                headers.pop("Authorization", None)  # the token may lack the permission
                entries = json.loads(_read_url(Request(url, headers=headers)))
            if not entries:
                break
            if any(e["name"] == ref or e["commit"]["sha"].startswith(ref) for e in entries):
                return
            page += 1
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit "
                     "from a forked repo, please call hub.load() with forked repo directly.")


def _extract_within(archive, target):
    """Unzip, refusing members that would land outside ``target``."""
    root = os.path.realpath(target)
    for member in archive.namelist():
        dest = os.path.realpath(os.path.join(root, member))
        if os.path.commonpath([root, dest]) != root:
            raise ValueError(f"Member {member} is outside of the target directory")
    archive.extractall(root)


def _repo_dir(github, force_reload, trust_repo, verbose, skip_validation):
    """The local copy of ``github`` (``owner/name[:ref]``), downloaded if not cached."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _split_repo(github)
    cache_name = f"{owner}_{name}_{ref.replace('/', '_')}"
    repo_dir = os.path.join(hub_dir, cache_name)
    _check_trusted(owner, name, cache_name, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    try:
        if not skip_validation:
            _check_not_a_fork(owner, name, ref)
        archive_path = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
        sys.stdout.write(f'Downloading: "{url}" to {archive_path}\n')
        download_url_to_file(url, archive_path, progress=False)
    except HTTPError:
        raise
    except URLError as e:
        raise URLError(f"{e.reason} (ember.hub could not reach GitHub to download {github}; "
                       "source='github' needs network access: with no network, load a local "
                       "checkout with source='local')") from e
    with zipfile.ZipFile(archive_path) as archive:
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        shutil.rmtree(extracted, ignore_errors=True)
        _extract_within(archive, hub_dir)
    os.remove(archive_path)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


# ---- the public functions -----------------------------------------------------------------

def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """The entry points (public callables) of the GitHub repository ``github``'s hubconf.py
    (``owner/name[:ref]``; downloaded unless cached)."""
    repo_dir = _repo_dir(github, force_reload, trust_repo, verbose, skip_validation)
    module = _import_hubconf(repo_dir)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """The docstring of entry point ``model`` of the GitHub repository ``github``."""
    repo_dir = _repo_dir(github, force_reload, trust_repo, True, skip_validation)
    return _entry_point(_import_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point ``model`` of a hubconf.py with ``*args, **kwargs`` and return what
    it returns. ``source='local'``: ``repo_or_dir`` is a directory; ``'github'``: a
    repository ``owner/name[:ref]``, downloaded into the cache unless it is there (then
    ``force_reload`` downloads again; ``trust_repo`` True / "check" / False, see above;
    ``skip_validation`` skips checking through GitHub's API that the ref is the repo's).

    >>> import ember
    >>> ember.hub.load("/no/such/dir", "m", source="elsewhere")
    Traceback (most recent call last):
    ValueError: Unknown source: "elsewhere". Allowed values: "github" | "local".
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _repo_dir(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_or_dir):
        entry = _entry_point(_import_hubconf(repo_or_dir), model)
        return entry(*args, **kwargs)


class _Progress:
    """A byte counter on stderr (tqdm's bar when tqdm is installed)."""

    def __init__(self, total, enabled):
        self.bar = None
        self.enabled, self.total, self.done = enabled, total, 0
        if enabled and _module_exists("tqdm"):
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)

    def update(self, n):
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            of = f" of {self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.done}{of} bytes")

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\n")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` (any scheme urllib opens: http(s), file://) to the file ``dst``,
    through a temporary file so a broken download leaves no partial ``dst``;
    ``hash_prefix``: the SHA-256 of the contents must start with it (RuntimeError if not).

    >>> import ember, os, tempfile, pathlib
    >>> d = tempfile.mkdtemp(); src = pathlib.Path(d, "a.txt"); _ = src.write_text("hi")
    >>> ember.hub.download_url_to_file(src.as_uri(), os.path.join(d, "b.txt"), progress=False)
    >>> pathlib.Path(d, "b.txt").read_text()
    'hi'
    """
    dst = os.path.expanduser(dst)
    partial = f"{dst}.{uuid.uuid4().hex}.partial"
    digest = hashlib.sha256() if hash_prefix is not None else None
    try:
        with urlopen(Request(url, headers={"User-Agent": "ember.hub"})) as response, \
                open(partial, "wb") as out:
            length = response.info().get_all("Content-Length")
            bar = _Progress(int(length[0]) if length else None, progress)
            while True:
                chunk = response.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                if digest is not None:
                    digest.update(chunk)
                bar.update(len(chunk))
            bar.close()
        if digest is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                               f'"{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _is_legacy_zip(path):
    """A zip holding exactly one file: the pre-1.6 way of publishing a checkpoint."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _load_legacy_zip(path, model_dir, map_location, weights_only):
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(path) as z:
        _extract_within(z, model_dir)
        inner = os.path.join(model_dir, z.infolist()[0].filename)
    return _ember_load(inner, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at ``url``, downloaded once into ``model_dir`` (default
    ``<hub_dir>/checkpoints``) as ``file_name`` (default: the URL's file name) and read with
    ``ember.load``. ``check_hash``: the file name's ``-<hex digits>.`` part must start the
    contents' SHA-256.

    >>> import ember, os, pathlib, tempfile
    >>> d = tempfile.mkdtemp(); path = os.path.join(d, "w.pt")
    >>> ember.save({"w": ember.ones(2)}, path)
    >>> ember.hub.load_state_dict_from_url(pathlib.Path(path).as_uri(),
    ...                                    model_dir=os.path.join(d, "cache"), progress=False)
    Downloading: ...
    {'w': tensor([1., 1.])}
    """
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _is_legacy_zip(cached):
        return _load_legacy_zip(cached, model_dir, map_location, weights_only)
    return _ember_load(cached, map_location=map_location, weights_only=weights_only)
