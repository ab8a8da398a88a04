/**
 * The LSP contract with the server (ARCHITECTURE §3), imported from here. Its one copy on this side is
 * `protocol.generated.ts`, which `python -m scripts.gen_protocol` writes from the server's payload
 * classes (names as the Python's, camelCase JSON); change the Python, never the copy.
 */

export * from './protocol.generated';
