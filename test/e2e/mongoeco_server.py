"""Start a mongoeco wire-protocol server for the bson-rs end-to-end tests.

Usage: python mongoeco_server.py [port]   (port 0 = pick a free loopback port)

Prints one line `LISTENING <port>` on stdout once the server accepts
connections, then serves until stdin closes or the process is terminated.

Two adaptations for the Node.js driver, applied to mongoeco's wire proxy:
* replies: `cursor.id` is sent as BSON Int64 (the Node driver requires a long);
* requests: Int64 cursor ids in getMore / killCursors reach mongoeco as plain
  ints (mongoeco decodes Int64 to its own scalar type and rejects it there).
"""
import asyncio
import sys

from bson.int64 import Int64
from mongoeco.core.bson_scalars import BsonInt64
import mongoeco.wire.proxy as proxy
from mongoeco.wire.protocol import OpMsgRequest


def _plain_int(value):
    if isinstance(value, BsonInt64):
        return int(value.value)
    if isinstance(value, Int64):
        return int(value)
    return value


_decode_op_msg = proxy.decode_op_msg


def decode_op_msg(header, payload):
    request = _decode_op_msg(header, payload)
    body = request.body
    if "getMore" in body:
        body["getMore"] = _plain_int(body["getMore"])
    if "killCursors" in body and isinstance(body.get("cursors"), list):
        body["cursors"] = [_plain_int(c) for c in body["cursors"]]
    return request


_encode_op_msg_response = proxy.encode_op_msg_response


def encode_op_msg_response(document, *, request_id, response_to):
    cursor = document.get("cursor") if isinstance(document, dict) else None
    if isinstance(cursor, dict) and "id" in cursor:
        cursor_id = cursor["id"]
        if isinstance(cursor_id, BsonInt64):
            cursor_id = cursor_id.value
        if isinstance(cursor_id, int) and not isinstance(cursor_id, bool):
            cursor["id"] = Int64(cursor_id)
    return _encode_op_msg_response(document, request_id=request_id, response_to=response_to)


proxy.decode_op_msg = decode_op_msg
proxy.encode_op_msg_response = encode_op_msg_response


async def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = proxy.AsyncMongoEcoProxyServer(host="127.0.0.1", port=port)
    address = await server.start()
    print(f"LISTENING {address.port}", flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.create_future()

    def on_stdin():
        if not sys.stdin.buffer.read1(4096):
            loop.remove_reader(sys.stdin.fileno())
            if not stdin_closed.done():
                stdin_closed.set_result(None)

    try:
        loop.add_reader(sys.stdin.fileno(), on_stdin)
    except (OSError, ValueError, NotImplementedError):
        pass
    try:
        await stdin_closed
    finally:
        await server.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
