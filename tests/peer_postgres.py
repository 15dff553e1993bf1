"""A PostgreSQL as a host usually runs one: its socket in a folder under `/run` (outside its data
dir), and peer authentication, which lets the worker's own user in as the superuser. Root only:
the server runs as pgserver's own user, as the embedded one does."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER_USER = "pgserver"


def binaries() -> Path:
    from pgserver._commands import POSTGRES_BIN_PATH  # the embedded server's own build

    return Path(POSTGRES_BIN_PATH)


@contextmanager
def peer_postgres() -> Iterator[Path]:
    """The socket's folder of a running server; the socket is `<folder>/.s.PGSQL.5432`."""
    import pwd

    from pgserver.utils import ensure_user_exists

    ensure_user_exists(SERVER_USER)
    server = pwd.getpwnam(SERVER_USER)
    data = Path(tempfile.mkdtemp(prefix="isolator-peer-pg-", dir="/var/tmp"))
    sockets = Path(tempfile.mkdtemp(prefix="isolator-test-postgresql-", dir="/run"))
    for folder in (data, sockets):
        os.chown(folder, server.pw_uid, server.pw_gid)
    sockets.chmod(0o755)
    as_server = ["runuser", "-u", SERVER_USER, "--"]
    subprocess.run([*as_server, str(binaries() / "initdb"), "-D", str(data / "pg"), "-U", "postgres",
                    "--auth-local=peer", "--auth-host=reject"], check=True, capture_output=True)
    (data / "pg" / "pg_hba.conf").write_text("local all all peer map=host\n")
    (data / "pg" / "pg_ident.conf").write_text(f"host {SERVER_USER} postgres\nhost root postgres\n")
    server_process = subprocess.Popen([*as_server, str(binaries() / "postgres"), "-D", str(data / "pg"),
                                       "-k", str(sockets), "-c", "listen_addresses=", "-p", "5432"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(1200):  # until it accepts connections
            ready = subprocess.run([str(binaries() / "pg_isready"), "-q", "-h", str(sockets), "-p", "5432"])
            if ready.returncode == 0:
                break
            time.sleep(0.05)
        yield sockets
    finally:
        server_process.terminate()
        server_process.wait(30)
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(sockets, ignore_errors=True)
