"""How evolve runs alongside real agents: Claude Code (hooks, skill links, sources).

`claude_code` installs and uninstalls; `links` keeps the skill links and git excludes in
step with the agent's skills; `sources` points agent.toml at the transcripts. The hook
entry point itself is `evolve.hookmain` (standard library only, for speed).
"""
