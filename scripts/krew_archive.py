"""Build the archive krew installs for `kubectl kresched` and print its sha256.

The archive holds only `plugins/krew/kubectl-kresched` (a wrapper that runs the kresched pip
installed) and is byte-for-byte reproducible (fixed order, times, owners), so the sha256 in
`plugins/krew/kresched.yaml` changes only when the wrapper does. tests/test_plugin.py checks that
the manifest names this archive's sha256.

    python scripts/krew_archive.py [OUT.tar.gz]
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "plugins" / "krew" / "kubectl-kresched"


def archive_bytes() -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        data = WRAPPER.read_bytes()
        info = tarfile.TarInfo("kubectl-kresched")
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def main(argv: list[str]) -> int:
    data = archive_bytes()
    if argv:
        Path(argv[0]).write_bytes(data)
    print(hashlib.sha256(data).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
