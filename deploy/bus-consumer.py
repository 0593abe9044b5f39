#!/usr/bin/env python3
"""The compose `bus` profile's consumer: reads Meerkat's EVE stream with a consumer group
and appends every record to a file, acknowledging (XACK) each batch once it is written
and fsync'ed. Pending entries of this consumer (read before a crash, never acknowledged)
are read again first, so nothing is lost between the stream and the file.

Environment: REDIS_HOST (127.0.0.1), REDIS_PORT (6379), REDIS_STREAM (eve),
REDIS_GROUP (meerkat-consumers), REDIS_CONSUMER (the host name), OUT (the file).
"""
import os
import socket
import time

import redis

host = os.environ.get("REDIS_HOST", "127.0.0.1")
port = int(os.environ.get("REDIS_PORT", "6379"))
stream = os.environ.get("REDIS_STREAM", "eve")
group = os.environ.get("REDIS_GROUP", "meerkat-consumers")
consumer = os.environ.get("REDIS_CONSUMER", socket.gethostname())
out_path = os.environ.get("OUT", "/var/lib/meerkat-consumer/eve.json")

while True:
    try:
        r = redis.Redis(host=host, port=port)
        try:
            r.xgroup_create(stream, group, id="0", mkstream=True)
        except redis.ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise
        with open(out_path, "ab") as out:
            start = "0"  # this consumer's pending entries first, then new ones (">")
            while True:
                got = r.xreadgroup(group, consumer, {stream: start}, count=500, block=5000)
                entries = got[0][1] if got else []
                if start == "0" and not entries:
                    start = ">"
                    continue
                if not entries:
                    continue
                for _id, fields in entries:
                    out.write(fields[b"eve"] + b"\n")
                out.flush()
                os.fsync(out.fileno())
                r.xack(stream, group, *[i for i, _ in entries])
    except redis.ConnectionError as e:
        print(f"consumer: {e}; retrying", flush=True)
        time.sleep(1)
