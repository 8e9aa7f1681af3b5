"""How evolve runs alongside real agents: Claude Code and Codex (hooks, skill links, sources).

`claude_code` and `codex` install and uninstall, on what `hookfile` shares (the JSON hook
file, the command form); `sources` points agent.toml at the transcripts; the skill links
themselves are the workspace's (`evolve.workspace.links`). The hook entry point is
`evolve.hookmain` (standard library only, for speed).
"""
