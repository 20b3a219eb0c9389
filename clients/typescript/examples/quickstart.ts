import { type AgentMessage, PiSession } from "pi-session";

const pi = PiSession.spawn(); // the binary: $PI_SESSION_BIN, else pi-session on PATH
pi.onHook("session_before_tree", async () => ({ summary: { summary: "Answered 4." } }));
pi.on("session_tree", (e) => console.log("moved to", e.newLeafId, "summary from hook:", e.fromExtension));
await pi.initialize({ deterministic: true });
const { sessionId } = await pi.session.create({ cwd: "/home/me/project", inMemory: true });
const say = (message: AgentMessage) => pi.session.append({ sessionId, entry: { type: "message", message } });
const question = await say({ role: "user", content: "What is 2+2?", timestamp: 1 });
await say({ role: "assistant", content: [{ type: "text", text: "4" }], provider: "p", model: "m", stopReason: "stop", timestamp: 2 });
const back = await pi.session.navigateTree({ sessionId, targetId: question.entryId, summarize: true });
console.log("editor text:", back.editorText);
await pi.dispose();
