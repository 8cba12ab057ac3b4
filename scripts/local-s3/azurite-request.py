#!/usr/bin/env python3
"""Send one Azure Blob Storage request signed with Shared Key, and print the answer.

A test and probe tool for Azurite (azurite-start.sh); the standard library only.

  azurite-request.py [options] METHOD URL [--header 'Name: value']... [--data STRING]

URL is path-style, as Azurite serves it: http://127.0.0.1:10000/devstoreaccount1/CONTAINER/BLOB
(so the account name is both the first path segment and the account of the signature).

Prints the status line, the response headers as received and, after an empty line, the body
(stdout); --status prints the status code alone. Exit status: 0 for any HTTP answer (whatever its
status), 1 when no answer came (connection refused, timeout), 2 for bad usage.

Env: S3LECT_AZURE_ACCOUNT (default devstoreaccount1) and S3LECT_AZURE_KEY (default Azurite's
well-known key of devstoreaccount1) sign the request; --key and --account override them,
--no-auth sends no Authorization header.

Signing, per the Azure Storage REST reference "Authorize with Shared Key": x-ms-date and
x-ms-version (2025-01-05 unless given with --header) are added, then

  StringToSign = VERB \\n Content-Encoding \\n Content-Language \\n Content-Length (empty when 0)
    \\n Content-MD5 \\n Content-Type \\n Date \\n If-Modified-Since \\n If-Match \\n If-None-Match
    \\n If-Unmodified-Since \\n Range \\n CanonicalizedHeaders CanonicalizedResource
  CanonicalizedHeaders = each x-ms-* header as "lowercase-name:value\\n", sorted by name
  CanonicalizedResource = "/" account path, then "\\nname:value" per query parameter (name in
    lower case, value URL-decoded, sorted by name; several values of one name comma-joined)
  Authorization: SharedKey account:Base64(HMAC-SHA256(Base64Decode(key), UTF-8(StringToSign)))
"""

import argparse
import base64
import email.utils
import hashlib
import hmac
import http.client
import os
import re
import sys
import urllib.parse

DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")
API_VERSION = "2025-01-05"

# The standard headers of the string to sign, in its order.
SIGNED_STANDARD = ("content-encoding", "content-language", "content-length", "content-md5",
                   "content-type", "date", "if-modified-since", "if-match", "if-none-match",
                   "if-unmodified-since", "range")


def string_to_sign(method, path, query, headers, account):
    """headers: list of (name, value) as sent; path: the URL path as sent (percent-encoded)."""
    lower = {}
    for name, value in headers:
        lower.setdefault(name.lower(), []).append(value.strip())
    parts = [method.upper()]
    for name in SIGNED_STANDARD:
        value = ",".join(lower.get(name, []))
        if name == "content-length" and value == "0":
            value = ""
        parts.append(value)
    out = "\n".join(parts) + "\n"
    for name in sorted(n for n in lower if n.startswith("x-ms-")):
        value = ",".join(re.sub(r"\s+", " ", v) for v in lower[name])
        out += f"{name}:{value}\n"
    out += f"/{account}{path or '/'}"
    params = {}
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        params.setdefault(name.lower(), []).append(value)
    for name in sorted(params):
        out += f"\n{name}:{','.join(sorted(params[name]))}"
    return out


def sign(sts, key):
    digest = hmac.new(base64.b64decode(key), sts.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def request(method, url, headers=(), data=None, account=None, key=None, auth=True,
            timeout=10.0, conn=None):
    """Sends one request; returns (status, reason, [(name, value)...], body bytes, version).

    headers: (name, value) pairs. conn: an http.client.HTTPConnection to reuse (keep-alive)."""
    account = account or os.environ.get("S3LECT_AZURE_ACCOUNT") or DEV_ACCOUNT
    key = key or os.environ.get("S3LECT_AZURE_KEY") or DEV_KEY
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url}")
    body = data.encode("utf-8") if isinstance(data, str) else data
    hdrs = list(headers)
    names = {n.lower() for n, _ in hdrs}
    if "x-ms-date" not in names:
        hdrs.append(("x-ms-date", email.utils.formatdate(usegmt=True)))
    if "x-ms-version" not in names:
        hdrs.append(("x-ms-version", API_VERSION))
    if "content-length" not in names and (body is not None or method.upper() in ("PUT", "POST")):
        hdrs.append(("Content-Length", str(len(body or b""))))
    if auth:
        sts = string_to_sign(method, parts.path, parts.query, hdrs, account)
        hdrs.append(("Authorization", f"SharedKey {account}:{sign(sts, key)}"))
    own = conn is None
    if own:
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname, parts.port, timeout=timeout)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        # skip_accept_encoding: only the headers given here (and Host) are sent.
        conn.putrequest(method.upper(), target, skip_accept_encoding=True)
        for name, value in hdrs:
            conn.putheader(name, value)
        conn.endheaders(body)
        resp = conn.getresponse()
        payload = resp.read()
        version = {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(resp.version, "HTTP/?")
        return resp.status, resp.reason, resp.getheaders(), payload, version
    finally:
        if own:
            conn.close()


def main():
    ap = argparse.ArgumentParser(
        description="Send one Shared Key signed Azure Blob request and print the answer.",
        epilog="Env: S3LECT_AZURE_ACCOUNT, S3LECT_AZURE_KEY (default: Azurite's devstoreaccount1).")
    ap.add_argument("method")
    ap.add_argument("url")
    ap.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                    help="a request header (repeatable); an empty value is sent as given")
    ap.add_argument("-d", "--data", help="request body (UTF-8 text)")
    ap.add_argument("--data-file", help="request body read from this file ('-': stdin)")
    ap.add_argument("--account", help="account of the signature (default: env or devstoreaccount1)")
    ap.add_argument("--key", help="base64 account key (default: env or Azurite's well-known key)")
    ap.add_argument("--no-auth", action="store_true", help="send no Authorization header")
    ap.add_argument("--status", action="store_true", help="print the status code alone")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds (default 10)")
    args = ap.parse_args()

    headers = []
    for h in args.header:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            ap.error(f"--header {h!r}: expected 'Name: value'")
        headers.append((name.strip(), value.strip()))
    if args.data is not None and args.data_file is not None:
        ap.error("--data and --data-file exclude each other")
    data = args.data
    if args.data_file is not None:
        if args.data_file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.data_file, "rb") as f:
                data = f.read()
    try:
        status, reason, resp_headers, body, version = request(
            args.method, args.url, headers, data, args.account, args.key, not args.no_auth,
            args.timeout)
    except (OSError, http.client.HTTPException) as e:
        print(f"azurite-request.py: {args.method} {args.url}: {e}", file=sys.stderr)
        return 1
    out = sys.stdout
    if args.status:
        print(status, file=out)
        return 0
    print(f"{version} {status} {reason}", file=out)
    for name, value in resp_headers:
        print(f"{name}: {value}", file=out)
    print(file=out)
    out.flush()
    sys.stdout.buffer.write(body)
    if body and not body.endswith(b"\n"):
        sys.stdout.buffer.write(b"\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
