#!/usr/bin/env python3
"""Writes small hand-made v3 sessions that exercise compaction edge cases (see compaction-facts.md)."""
import json, sys

def usage(total, inp=None):
    return {"input": inp if inp is not None else total - 100, "output": 100, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": total, "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}}

class S:
    def __init__(self):
        self.lines = [{"type": "session", "version": 3, "id": "edge-session", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/dev/p"}]
        self.n = 0; self.leaf = None
    def add(self, type_, parent="leaf", **kw):
        self.n += 1
        eid = f"e{self.n:03d}"
        p = self.leaf if parent == "leaf" else parent
        e = {"type": type_, "id": eid, "parentId": p, "timestamp": f"2026-01-01T00:{self.n // 60:02d}:{self.n % 60:02d}.000Z"}
        e.update(kw)
        self.lines.append(e); self.leaf = eid
        return eid
    def msg(self, m, parent="leaf"):
        m.setdefault("timestamp", 1767225600000 + self.n * 1000)
        return self.add("message", parent, message=m)
    def user(self, text, **kw): return self.msg({"role": "user", "content": [{"type": "text", "text": text}], **kw})
    def asst(self, blocks, total=0, stop="stop", **kw):
        return self.msg({"role": "assistant", "content": blocks, "api": "anthropic-messages", "provider": "anthropic",
                         "model": "claude", "usage": usage(total) if total else usage(0, 0), "stopReason": stop, **kw})
    def tool(self, cid, name, text, **kw):
        return self.msg({"role": "toolResult", "toolCallId": cid, "toolName": name, "content": [{"type": "text", "text": text}], "isError": False, **kw})
    def write(self, path):
        with open(path, "w") as f:
            for l in self.lines: f.write(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n")

IMG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
def tc(i, name, args): return {"type": "toolCall", "id": f"call{i}", "name": name, "arguments": args}

# edge.jsonl: every message kind, file ops of every sort, a branch summary with details, an image,
# a long tool result whose 2000-char cut falls inside an emoji, integer-like argument keys.
s = S()
s.add("model_change", provider="anthropic", modelId="claude")
s.add("thinking_level_change", thinkingLevel="high")
s.msg({"role": "user", "content": [{"type": "text", "text": "look at this 😀"}, IMG]})
s.asst([{"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"}, {"type": "text", "text": "reading"},
        tc(1, "read", {"path": "src/a.ts"}), tc(2, "edit", {"path": "src/b.ts", "oldText": "x", "newText": "y"}),
        tc(3, "write", {"path": 5, "content": "n"}), tc(4, "bash", {"command": "ls", "path": "ignored.ts"})], total=5000, stop="toolUse")
s.tool("call1", "read", "A" * 1999 + "😀" + "B" * 600)
s.tool("call2", "edit", "ok")
s.tool("call3", "write", "ok", content=[{"type": "text", "text": "img:"}, IMG])
s.tool("call4", "bash", "file1\nfile2")
s.asst([{"type": "text", "text": "done part one"}], total=7000)
s.msg({"role": "bashExecution", "command": "git status", "output": "clean", "exitCode": 1, "cancelled": False, "truncated": False})
s.msg({"role": "bashExecution", "command": "secret", "output": "hidden", "exitCode": 0, "cancelled": False, "truncated": False, "excludeFromContext": True})
s.add("custom_message", customType="note", content="remember the milk", display=True)
s.add("custom", customType="state", data={"x": 1})
s.add("label", targetId="e003", label="start")
s.add("branch_summary", fromId="e010", summary="Earlier branch did things.", details={"readFiles": ["old/read.ts", "src/b.ts"], "modifiedFiles": ["old/mod.ts"]}, fromHook=False)
s.add("branch_summary", fromId="e010", summary="Hook branch.", details={"readFiles": ["hook/read.ts"], "modifiedFiles": ["hook/mod.ts"]}, fromHook=True)
s.add("branch_summary", fromId="e010", summary="")
s.user("second task: " + "word " * 400)
s.asst([{"type": "text", "text": "ok " * 300}, tc(5, "read", {"b": 1, "2": "x", "a": [1, 2], "path": "src/c.ts"})], total=9000, stop="toolUse")
s.tool("call5", "read", "C" * 800)
s.asst([{"type": "text", "text": "final " * 200}], total=0, stop="error", errorMessage="overloaded")
s.user("third " * 100)
s.asst([{"type": "text", "text": "answer " * 150}], total=11000)
s.write("edge.jsonl")

# tiny.jsonl: one exchange (pi-cli refuses: nothing to compact; the harness does not refuse).
t = S(); t.user("hi"); t.asst([{"type": "text", "text": "hello"}], total=120); t.write("tiny.jsonl")

# split-first.jsonl: one huge turn; the cut falls inside it and there is no history before it.
u = S(); u.user("do it")
for i in range(8):
    u.asst([{"type": "text", "text": f"step {i} " + "z" * 4000}, tc(10 + i, "read", {"path": f"f{i}.ts"})], total=2000 * (i + 1), stop="toolUse")
    u.tool(f"call{10 + i}", "read", "r" * 4000)
u.asst([{"type": "text", "text": "all done"}], total=30000)
u.write("split-first.jsonl")

# compacted.jsonl: a pi compaction (details) then more work; and the leaf at a compaction.
c = S(); c.user("one " * 2000); c.asst([{"type": "text", "text": "a1"}, tc(20, "edit", {"path": "x.ts"})], total=3000, stop="toolUse")
c.tool("call20", "edit", "ok"); k = c.user("two " * 2000); c.asst([{"type": "text", "text": "a2"}], total=6000)
c.add("compaction", summary="PREVIOUS SUMMARY", firstKeptEntryId=k, tokensBefore=6000, details={"readFiles": ["r0.ts"], "modifiedFiles": ["m0.ts"]}, fromHook=False)
c.user("three " * 2000); c.asst([{"type": "text", "text": "a3"}, tc(21, "write", {"path": "r0.ts"})], total=4000, stop="toolUse")
c.tool("call21", "write", "ok"); c.user("four " * 2000); c.asst([{"type": "text", "text": "a4"}], total=8000)
c.write("compacted.jsonl")
c.add("compaction", summary="S2", firstKeptEntryId="e009", tokensBefore=8000, fromHook=True, details={"readFiles": ["z.ts"]})
c.write("leaf-at-compaction.jsonl")

# label-before-user.jsonl: a label (or model change) right before the user message where the cut
# falls. pi moves the cut back onto the label, which is no turn start, so the previous turn becomes
# a "split turn" prefix.
m = S(); m.user("first " * 500); m.asst([{"type": "text", "text": "x" * 8000}], total=3000)
m.add("label", targetId="e001", label="mark"); m.add("model_change", provider="openai", modelId="gpt")
m.user("second " * 500); m.asst([{"type": "text", "text": "y" * 8000}], total=6000)
m.write("label-before-user.jsonl")
