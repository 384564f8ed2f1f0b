"""Command line: `streampace serve` and `streampace record` (also `python -m streampace`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "build_parser"]


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _prefix(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 128:
        raise argparse.ArgumentTypeError(f"must be 1..128, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from streampace._version import package_version

    parser = argparse.ArgumentParser(prog="streampace", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve",
        help="serve the demo page and stream sessions over WebSocket",
        description="Serve the page and stream AG-UI runs to browsers (docs/server.md).",
    )
    _source_options(serve)
    _session_options(serve)
    _admission_options(serve)
    _store_and_process_options(serve)
    record = sub.add_parser(
        "record",
        help="write a simulated run as JSONL with timestamps (for --source replay:PATH)",
    )
    record.add_argument("--scenario", default="demo", help="simulated scenario (default demo)")
    record.add_argument("--seed", type=int, default=0)
    record.add_argument("-o", "--output", type=Path, default=None, help="file (default stdout)")
    return parser


def _source_options(serve: argparse.ArgumentParser) -> None:
    """`serve`: where it listens and where runs come from."""
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 = any)")
    serve.add_argument(
        "--source",
        default="demo",
        help="demo (simulated model, default) | replay:PATH | agui:URL | openai:URL",
    )
    serve.add_argument("--model", help="model name for openai:URL")
    serve.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key for openai:URL (default OPENAI_API_KEY)",
    )
    serve.add_argument("--speed", type=_positive_float, default=1.0,
                       help="time scale for demo and replay (2 = twice as fast)")
    serve.add_argument("--seed", type=int, default=0, help="seed for the demo source")


def _session_options(serve: argparse.ArgumentParser) -> None:
    """`serve`: who may connect from a page, and what a session keeps."""
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="extra WebSocket Origin to accept (repeatable; '*' = any)",
    )
    serve.add_argument("--log-events", type=_positive_int, default=10_000,
                       help="session log bound in events (default 10000)")
    serve.add_argument("--log-bytes", type=_positive_int, default=8 * 1024 * 1024,
                       help="session log bound in bytes of JSON (default 8 MiB)")
    serve.add_argument("--history-messages", type=_positive_int, default=1_000,
                       help="completed messages a session keeps for snapshots and upstream "
                            "history (default 1000)")
    serve.add_argument("--history-bytes", type=_positive_int, default=4 * 1024 * 1024,
                       help="bytes of message text a session keeps for snapshots and upstream "
                            "history (default 4 MiB)")
    serve.add_argument("--max-sessions", type=_positive_int, default=1_000,
                       help="sessions held in memory; past it the longest-idle unwatched one is "
                            "forgotten (default 1000)")


def _admission_options(serve: argparse.ArgumentParser) -> None:
    """`serve`: who may open a session socket, how often, and how many."""
    admission = serve.add_argument_group("admission and limits (docs/security.md)")
    admission.add_argument(
        "--client-session-ids", action="store_true",
        help="also accept session ids a client made up (default: only ids the server minted "
             "for /ws/sessions/new; an id anyone can guess is anyone's session)")
    admission.add_argument("--attach-timeout", type=_positive_float, default=10.0,
                           help="seconds a socket has to send resume or run (default 10)")
    admission.add_argument("--handshake-timeout", type=_positive_float, default=10.0,
                           help="seconds a connection has to send a whole request (default 10)")
    admission.add_argument("--max-connections-per-client", type=_non_negative_int, default=256,
                           help="open sockets per address; 0 = no limit (default 256)")
    admission.add_argument("--max-sessions-per-client", type=_non_negative_int, default=64,
                           help="sessions one address created and still uses; 0 = no limit "
                                "(default 64)")
    admission.add_argument("--ipv6-prefix", type=_prefix, default=64, metavar="BITS",
                           help="per-address limits count an IPv6 client by this prefix "
                                "(default 64: a host's usual allocation)")
    admission.add_argument("--new-sessions-per-s", type=_positive_float, default=100.0,
                           metavar="RATE",
                           help="new sessions in all per second, after a burst of 200; past "
                                "it 1013 (default 100)")
    admission.add_argument("--client-new-sessions-per-s", type=_positive_float, default=5.0,
                           metavar="RATE",
                           help="new sessions per address per second, after a burst of 20; "
                                "past it 4429 (default 5)")
    admission.add_argument(
        "--forwarded-allow-ips", action="append", default=[], metavar="ADDRESS",
        help="a proxy whose X-Forwarded-For names the client (repeatable; an address or "
             "network, '*' = any); default: none, forwarded headers are ignored")
    admission.add_argument("--max-connections", type=_non_negative_int, default=0,
                           help="open connections in all; 0 = the file-descriptor limit less "
                                "256 (default)")
    admission.add_argument("--memory-budget", type=_positive_int, default=1024, metavar="MIB",
                           help="MiB of session logs and kept text in all; past it new sessions "
                                "are refused (1013) while existing ones stream on (default 1024)")
    admission.add_argument("--session-quiet", type=_positive_float, default=300.0,
                           metavar="SECONDS",
                           help="a session used this recently is never forgotten to make room "
                                "(default 300)")
    admission.add_argument("--ping-interval", type=_positive_float, default=20.0,
                           help="seconds between WebSocket pings (default 20)")
    admission.add_argument("--ping-timeout", type=_positive_float, default=20.0,
                           help="seconds to wait for a pong before closing (default 20)")


def _store_and_process_options(serve: argparse.ArgumentParser) -> None:
    """`serve`: the session store, the processes, upstream bounds, files and logging."""
    serve.add_argument("--store", default="memory", metavar="STORE",
                       help="session store: memory (default) | redis://HOST:PORT/DB | "
                            "rediss://... | redis+cluster://HOST:PORT[,HOST:PORT...] "
                            "(docs/scaling.md); a password in the URL is never printed")
    serve.add_argument("--workers", type=_positive_int, default=1,
                       help="server processes sharing the port (needs a redis store when > 1)")
    serve.add_argument("--lease-ms", type=_positive_int, default=5_000,
                       help="redis store: a run's lease; a crashed owner's run ends with "
                            "run_lost this late (default 5000)")
    serve.add_argument("--stall-timeout", type=_positive_float, default=60.0,
                       help="seconds without data before an upstream counts as stalled")
    serve.add_argument("--max-event-bytes", type=_positive_int, default=1024 * 1024,
                       help="largest upstream event (one SSE event's data) in bytes; a bigger "
                            "one ends the run with upstream_protocol_error (default 1 MiB)")
    serve.add_argument("--root", type=Path, default=None,
                       help="directory holding index.html, js_shim/, vendor/ "
                            "(default: the installed package's copy, else the source checkout)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"])


def _record(args: argparse.Namespace) -> int:
    import json

    from streampace.sim import SCENARIOS, simulate, stamped

    if args.scenario not in SCENARIOS:
        print(f"streampace: unknown scenario {args.scenario!r}; choose one of: "
              f"{', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    events = stamped(simulate(args.scenario, seed=args.seed),
                     start_ms=1_700_000_000_000)
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from streampace.server import ServerConfig, SourceSpecError, build_server, parse_source
    from streampace.server.sources.base import SourceOptions

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    from streampace.server.store import check_store_spec, redact_url

    try:
        check_store_spec(args.store)
    except ValueError as exc:
        print(f"streampace: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1 and args.store == "memory":
        print("streampace: --workers needs a shared store (--store redis://...): the memory "
              "store keeps each session in one process", file=sys.stderr)
        return 2
    config = ServerConfig(
        store=args.store,
        lease_ms=args.lease_ms,
        host=args.host,
        port=args.port,
        source=args.source,
        allow_origins=tuple(args.allow_origin),
        log_events=args.log_events,
        log_bytes=args.log_bytes,
        history_messages=args.history_messages,
        history_bytes=args.history_bytes,
        max_sessions=args.max_sessions,
        client_session_ids=args.client_session_ids,
        attach_timeout_s=args.attach_timeout,
        handshake_timeout_s=args.handshake_timeout,
        max_connections_per_client=args.max_connections_per_client,
        max_sessions_per_client=args.max_sessions_per_client,
        ipv6_prefix=args.ipv6_prefix,
        new_sessions_per_s=args.new_sessions_per_s,
        client_new_sessions_per_s=args.client_new_sessions_per_s,
        forwarded_allow_ips=tuple(args.forwarded_allow_ips),
        max_connections=args.max_connections,
        memory_budget_bytes=args.memory_budget * 1024 * 1024,
        quiet_s=args.session_quiet,
        ws_ping_interval_s=args.ping_interval,
        ws_ping_timeout_s=args.ping_timeout,
    )
    if args.root is not None:
        config.root = args.root.resolve()
    if not (config.root / "index.html").is_file():
        print(f"streampace: warning: no index.html in {config.root}", file=sys.stderr)
    options = SourceOptions(
        speed=args.speed,
        seed=args.seed,
        model=args.model,
        api_key_env=args.api_key_env,
        stall_timeout_s=args.stall_timeout,
        max_event_bytes=args.max_event_bytes,
    )
    try:
        source = parse_source(args.source, options)
    except SourceSpecError as exc:
        print(f"streampace: {exc}", file=sys.stderr)
        return 2

    def ready(url: str) -> None:
        extra = "" if args.store == "memory" else f", store: {redact_url(args.store)}"
        if args.workers > 1:
            extra += f", {args.workers} workers"
        print(f"streampace: serving {url} (source: {args.source}{extra}) - Ctrl-C to stop",
              flush=True)

    if args.workers > 1:
        from streampace.server.workers import serve_workers

        return serve_workers(args.workers, config, lambda: parse_source(args.source, options),
                             args.log_level, ready)

    server = build_server(config, source, log_level=args.log_level, on_ready=ready)
    # uvicorn re-raises the Ctrl-C it caught once its graceful shutdown is done.
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    return 0 if server.started else 1


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "record":
        return _record(args)
    return 2  # pragma: no cover - argparse enforces the subcommand


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
