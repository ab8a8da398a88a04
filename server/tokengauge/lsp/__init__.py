"""The language server: stdin framing, the message loop, logging to the client, and the handlers
of the custom methods. The only package that imports pygls and lsprotocol."""
