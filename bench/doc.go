// Package bench holds intentgate's benchmarks against the alternatives an
// agent already has: a hook process per event against the daemon and a
// minimal Node.js hook, and the MCP server against the reference filesystem
// server. They skip what they lack (node, bench/node/node_modules); see
// README.md for how to run them.
package bench
