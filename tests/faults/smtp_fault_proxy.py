"""A TCP proxy in front of the harness's SMTP sink that drops its first connection in the middle of DATA: once the
client has sent the DATA command and `after` bytes of the message, both sockets are closed without a reply (the
sink never sees the end of the message, so it stores nothing). Later connections pass through untouched."""
import socket
import threading


class DropMidData:
    def __init__(self, upstream_port, after=200):
        self.upstream_port = upstream_port
        self.after = after
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.drops = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self):
        self.stopping = True
        self.listener.close()

    def _accept(self):
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=30)
            drop = self.connections == 1
            threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True).start()
            threading.Thread(target=self._pump, args=(client, upstream, drop), daemon=True).start()

    def _pump(self, src, dst, drop):
        """Copies src → dst; with `drop`, watches for DATA in the client's stream and cuts both after `after`
        more bytes."""
        seen = b""
        in_data_from = None
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                if drop:
                    seen += chunk
                    if in_data_from is None:
                        at = seen.find(b"DATA\r\n")
                        if at == 0 or (at > 0 and seen[at - 2:at] == b"\r\n"):
                            in_data_from = at + len(b"DATA\r\n")
                    if in_data_from is not None and len(seen) - in_data_from >= self.after:
                        cut = len(chunk) - (len(seen) - in_data_from - self.after)
                        dst.sendall(chunk[:max(cut, 0)])
                        self.drops += 1
                        for s in (src, dst):
                            s.shutdown(socket.SHUT_RDWR)
                        break
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.close()
                except OSError:
                    pass
