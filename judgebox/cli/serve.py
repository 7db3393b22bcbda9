"""``judgebox serve``: the SandboxFusion-compatible HTTP server (and OpenRLHF's ``/get_reward``)."""

from __future__ import annotations

import argparse
import sys

from judgebox.cli.common import UsageError, port_number, settings_flags


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``serve``'s flags: where it listens, and every sandbox setting."""
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0: "
                   "every interface)")
    p.add_argument("--port", type=port_number, default=8080, help="TCP port, 0-65535 (default 8080)")
    p.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    from judgebox.sandbox.config import SandboxSettings

    settings_flags(p.add_argument_group("sandbox settings (each also JUDGEBOX_<NAME>; a flag wins)"),
                   SandboxSettings)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn
    from pydantic import ValidationError

    from judgebox.integrations.openrlhf.endpoint import create_router
    from judgebox.sandbox import LocalSandbox, SandboxClient
    from judgebox.sandbox.config import SandboxSettings
    from judgebox.sandbox.server.app import create_app

    try:
        settings = SandboxSettings(**{name: getattr(args, name) for name in SandboxSettings.model_fields
                                      if hasattr(args, name)})
    except ValidationError as exc:  # one line per field: the message names the flag and the fix
        raise UsageError("; ".join(f"--{'-'.join(map(str, e['loc'])).replace('_', '-')}: "
                                   f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())) from None
    port_free(args.host, args.port)
    app = create_app(settings)
    # OpenRLHF's remote reward (POST /get_reward) judges in this process, with the server's settings.
    app.include_router(create_router(SandboxClient("", local=LocalSandbox(settings)),
                                     concurrency=settings.max_concurrency))
    # loop/http "auto": uvloop and httptools where installed (they are dependencies), else asyncio/h11;
    # no access log below "info" (it would be formatted per request and then dropped)
    print(f"judgebox serve: http://{args.host}:{args.port} ({settings.isolation} isolation, "
          f"{settings.max_concurrency} programs at once; --log-level info logs each request; Ctrl-C stops it)",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                loop="auto", http="auto", access_log=args.log_level in ("trace", "debug", "info"))
    print("judgebox serve: stopped", file=sys.stderr, flush=True)
    return 0


def port_free(host: str, port: int) -> None:
    """Raise :class:`UsageError` (exit 1, one line) when ``host:port`` cannot be bound (uvicorn logged
    the bind error and exited 3, a status this command does not document)."""
    import socket

    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            sock.bind(address)
    except OSError as exc:
        import errno

        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:  # the host is the problem
            raise UsageError(f"--host {host}: cannot listen on {host}:{port} ({exc.strerror or exc}); give an "
                             "address of this machine (127.0.0.1, 0.0.0.0 for every interface)") from None
        raise UsageError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc}); another server "
                         "may hold it: give another --port, or stop that server") from None
