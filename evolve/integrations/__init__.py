"""How evolve runs alongside real agents: Claude Code (hooks, skill links, sources).

`claude_code` installs and uninstalls; `sources` points agent.toml at the transcripts; the
skill links themselves are the workspace's (`evolve.workspace.links`). The hook entry point
is `evolve.hookmain` (standard library only, for speed).
"""
