"""Serves /srv/standin-web over HTTPS on 127.0.0.1:443 inside the
cloudinit-boot.sh guest, where /etc/hosts points get.rke2.io and github.com
at 127.0.0.1 and the test's CA is trusted: the URLs the online examples use
reach RKE2's installer and release artifacts stand-ins, nothing else."""
import functools
import http.server
import ssl



class ByHost(http.server.SimpleHTTPRequestHandler):
    # One directory per host name, like the real sites.
    def translate_path(self, path):
        host = (self.headers.get("Host") or "").split(":")[0]
        return super().translate_path("/" + host + path)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 443), functools.partial(ByHost, directory="/srv/standin-web"))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("/etc/standin-web/server.crt", "/etc/standin-web/server.key")
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
