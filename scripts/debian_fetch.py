#!/usr/bin/env python3
"""Fetch files from Debian's archive for the wheels build (scripts/wheels.sh), verified end to end.

A suite's InRelease is checked with gpgv against the Debian archive keyring this machine has
(debian-archive-keyring), the package index against the SHA256 that InRelease lists, and each
downloaded file against the SHA256 the index lists: what is built is what Debian signed, for the
version the suite serves today. Nothing is installed: binary packages are unpacked with dpkg-deb
into a folder of the build's own, source tarballs are left as they are.

    debian_fetch.py --suite bookworm --arch arm64 --unpack DIR libpython3.11-dev ...
    debian_fetch.py --suite bookworm --source sqlitecpp --into DIR      (the upstream tarball)

Downloads are kept in --cache (default: build/wheels/debian), keyed by their SHA256, so a second
run fetches only the signed indexes."""

import argparse
import hashlib
import lzma
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

MIRROR = os.environ.get("XWARP_DEBIAN_MIRROR", "http://deb.debian.org/debian")
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")


class FetchError(Exception):
    pass


def download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except OSError as e:
        raise FetchError(f"cannot download {url}: {e}") from e


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified_release(suite: str) -> dict[str, str]:
    """The SHA256 of every index the suite's signed InRelease lists, by its path."""
    if not KEYRING.exists():
        raise FetchError(f"{KEYRING} is missing (apt-get install debian-archive-keyring): nothing can be verified")
    signed = download(f"{MIRROR}/dists/{suite}/InRelease")
    with tempfile.TemporaryDirectory() as tmp:
        signed_path = Path(tmp) / "InRelease"
        signed_path.write_bytes(signed)
        check = subprocess.run(["gpgv", "--keyring", str(KEYRING), "--output", str(Path(tmp) / "Release"),
                                str(signed_path)], capture_output=True, text=True)
        if check.returncode != 0:
            raise FetchError(f"{suite}'s InRelease is not signed by a key of {KEYRING}:\n{check.stderr}")
        release = (Path(tmp) / "Release").read_text()
    sums: dict[str, str] = {}
    in_sha256 = False
    for line in release.splitlines():
        if not line.startswith(" "):
            in_sha256 = line.strip() == "SHA256:"
            continue
        if in_sha256:
            digest, _size, path = line.split()
            sums[path] = digest
    return sums


def index(suite: str, path: str) -> list[dict[str, str]]:
    """The stanzas of one signed index (Packages or Sources), checked against InRelease."""
    sums = verified_release(suite)
    if path not in sums:
        raise FetchError(f"{suite} has no {path}")
    packed = download(f"{MIRROR}/dists/{suite}/{path}")
    if sha256(packed) != sums[path]:
        raise FetchError(f"{suite}/{path}: its SHA256 is not the one InRelease lists")
    stanzas, current, key = [], {}, None
    for line in lzma.decompress(packed).decode().splitlines():
        if not line:
            if current:
                stanzas.append(current)
            current, key = {}, None
        elif line[0] in " \t" and key:
            current[key] += "\n" + line.strip()
        else:
            key, _, value = line.partition(":")
            current[key] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def cached_download(cache: Path, url: str, digest: str) -> Path:
    target = cache / digest / url.rsplit("/", 1)[1]
    if target.exists() and sha256(target.read_bytes()) == digest:
        return target
    data = download(url)
    if sha256(data) != digest:
        raise FetchError(f"{url}: its SHA256 is not the one the signed index lists")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def fetch_binaries(suite: str, arch: str, names: list[str], unpack: Path, cache: Path) -> None:
    stanzas = index(suite, f"main/binary-{arch}/Packages.xz")
    by_name = {s["Package"]: s for s in stanzas}  # a suite serves one version of each package
    unpack.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name not in by_name:
            raise FetchError(f"{suite} ({arch}) has no package {name}")
        stanza = by_name[name]
        deb = cached_download(cache, f"{MIRROR}/{stanza['Filename']}", stanza["SHA256"])
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpack)], check=True)
        print(f"{name} {stanza['Version']} ({suite}, {arch}) -> {unpack}")


def fetch_source(suite: str, name: str, into: Path, cache: Path) -> None:
    stanzas = [s for s in index(suite, "main/source/Sources.xz") if s["Package"] == name]
    if not stanzas:
        raise FetchError(f"{suite} has no source package {name}")
    stanza = stanzas[-1]
    for line in stanza["Checksums-Sha256"].splitlines():
        parts = line.split()
        if len(parts) == 3 and ".orig.tar." in parts[2]:
            digest, _size, file = parts
            tarball = cached_download(cache, f"{MIRROR}/{stanza['Directory']}/{file}", digest)
            into.mkdir(parents=True, exist_ok=True)
            subprocess.run(["tar", "-xf", str(tarball), "-C", str(into)], check=True)
            print(f"{name} {stanza['Version']} source ({suite}) -> {into}")
            return
    raise FetchError(f"{suite}'s {name} has no upstream tarball")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", required=True)
    parser.add_argument("--arch", default="amd64")
    parser.add_argument("--unpack", type=Path, help="unpack these binary packages here")
    parser.add_argument("--source", help="a source package whose upstream tarball to extract")
    parser.add_argument("--into", type=Path, help="where the source tarball is extracted")
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent.parent / "build" / "wheels" / "debian")
    parser.add_argument("packages", nargs="*")
    args = parser.parse_args()
    try:
        if args.source:
            if not args.into:
                parser.error("--source needs --into")
            fetch_source(args.suite, args.source, args.into, args.cache)
        else:
            if not args.unpack or not args.packages:
                parser.error("name the packages and --unpack DIR")
            fetch_binaries(args.suite, args.arch, args.packages, args.unpack, args.cache)
    except (FetchError, subprocess.CalledProcessError) as e:
        print(f"debian_fetch: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
