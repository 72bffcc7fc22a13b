"""Benchmark server: one ``echo`` tool, written with plainmcp."""

from plainmcp import Server, run_stdio

server = Server("bench-echo", "1.0.0")


@server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
async def echo(ctx, args):
    """Echo the text back."""
    return args["text"]


if __name__ == "__main__":
    run_stdio(server)
