#!/usr/bin/env python3
"""A small SMTP sink for bisectd's transport tests, built on Debian's python3-aiosmtpd.

Every accepted message is stored as OUT/NNNN.eml, its envelope as OUT/NNNN.env (the MAIL FROM address on the
first line, then one RCPT TO address per line). Once listening, the bound port is written to OUT/port.
Options: --port (0 picks a free one), --auth USER:PASSWORD (AUTH required, over plain text for the test),
--fail-first N (answer the first N messages with "421 try again later"; counted in OUT/failed).
Exits 125 when aiosmtpd cannot be imported, so ctest reports the test as skipped.
"""
import argparse
import asyncio
import os
import signal
import sys

try:
    from aiosmtpd.smtp import SMTP, AuthResult
except ImportError:
    sys.exit(125)


class Sink:
    def __init__(self, out, fail_first):
        self.out = out
        self.fail_first = fail_first

    def _write(self, name, data):
        tmp = os.path.join(self.out, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, os.path.join(self.out, name))

    async def handle_DATA(self, server, session, envelope):
        failed = len([n for n in os.listdir(self.out) if n.startswith("failed-")])
        if failed < self.fail_first:
            self._write("failed-%04d" % (failed + 1), b"")
            return "421 4.3.0 try again later"
        count = len([n for n in os.listdir(self.out) if n.endswith(".eml")]) + 1
        env = "\n".join([envelope.mail_from] + list(envelope.rcpt_tos)) + "\n"
        self._write("%04d.env" % count, env.encode())
        self._write("%04d.eml" % count, envelope.original_content or envelope.content)
        return "250 2.0.0 OK"


async def serve(args):
    loop = asyncio.get_running_loop()
    handler = Sink(args.out, args.fail_first)
    options = {"hostname": "localhost"}
    if args.auth:
        user, password = args.auth.split(":", 1)

        def check(server, session, envelope, mechanism, data):
            ok = data.login.decode() == user and data.password.decode() == password
            return AuthResult(success=ok, handled=False)

        options.update(authenticator=check, auth_required=True, auth_require_tls=False)
    server = await loop.create_server(lambda: SMTP(handler, **options), "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    handler._write("port", str(port).encode())
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await server.wait_closed()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--auth", default="")
    parser.add_argument("--fail-first", type=int, default=0)
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
