"""A TCP relay that adds a fixed delay to every chunk it forwards, in both directions (a delay line: chunks keep
their order and are not slowed by each other). The kernel here has no netem qdisc, so a test adds the round
trip of a remote host with this instead, inside its own network namespace.

    python tests/delay_relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS
"""

import asyncio
import sys
import time


async def pipe(reader, writer, delay_s):
    line = asyncio.Queue()

    async def send():
        while True:
            due, chunk = await line.get()
            if chunk is None:
                break
            if (wait := due - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            writer.write(chunk)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(send())
    try:
        while chunk := await reader.read(65536):
            line.put_nowait((time.monotonic() + delay_s, chunk))
    except ConnectionError:
        pass
    line.put_nowait((0, None))
    try:
        await sender
    except ConnectionError:
        pass


async def main(listen_host, listen_port, target_host, target_port, delay_ms):
    delay_s = float(delay_ms) / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, int(target_port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer, delay_s), pipe(server_reader, client_writer, delay_s))

    server = await asyncio.start_server(handle, listen_host, int(listen_port))
    print("relaying", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
