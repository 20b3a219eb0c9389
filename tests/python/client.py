"""Drive pi-session over stdio from Python (standard library only), answering a hook."""
import json, subprocess, sys

server = subprocess.Popen([sys.argv[1], "--stdio"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, encoding="utf-8")
next_id = 0

def call(method, params=None, on_hook=lambda method, params: None):
    """Send a request (one JSON message per line); answer hooks until the response comes."""
    global next_id
    next_id += 1
    send({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    while True:
        message = json.loads(server.stdout.readline())
        if message.get("id") == next_id:
            if "error" in message:
                raise RuntimeError(message["error"])
            return message["result"]
        if "method" in message and "id" in message:  # a hook: answer it
            send({"jsonrpc": "2.0", "id": message["id"],
                  "result": on_hook(message["method"], message["params"])})
        elif "method" in message:
            print("notification:", message["method"], message["params"]["newLeafId"])

def send(message):
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()

call("initialize", {"hooks": ["session_before_tree"], "deterministic": True})
session = call("session/create", {"cwd": "/home/me/project", "inMemory": True})["sessionId"]
def append(message):
    return call("session/append", {"sessionId": session,
                                   "entry": {"type": "message", "message": message}})["entryId"]
question = append({"role": "user", "content": "What is 2+2?", "timestamp": 1})
append({"role": "assistant", "content": [{"type": "text", "text": "4"}], "provider": "p",
        "model": "m", "stopReason": "stop", "timestamp": 2})

# Back to the question; our hook supplies the summary of the abandoned answer.
summary = lambda hook, params: {"summary": {"summary": "Answered 4."}}
moved = call("session/navigateTree", {"sessionId": session, "targetId": question,
                                      "summarize": True}, on_hook=summary)
print("editor text:", moved["editorText"])
context = call("session/buildContext", {"sessionId": session, "format": "llm"})
print("context:", [m["role"] for m in context["messages"]])
call("shutdown")
send({"jsonrpc": "2.0", "method": "exit"})
sys.exit(server.wait())
