#!/usr/bin/env python3
"""A real SMTP server (Debian's python3-aiosmtpd) on loopback that stores each message as a file.

Usage: smtp_sink.py PORT DIR   — writes DIR/NNN.eml (+ DIR/NNN.rcpt with the envelope recipients).
"""
import asyncio
import os
import sys
import time

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = len([f for f in os.listdir(directory) if f.endswith(".eml")])

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(self.directory, f"{self.count:03d}")
        with open(base + ".rcpt", "w") as f:
            f.write("\n".join(envelope.rcpt_tos) + "\n")
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK"


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port)
    controller.start()
    with open(os.path.join(directory, "ready"), "w") as f:
        f.write(str(os.getpid()))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
