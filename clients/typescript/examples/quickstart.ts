import { PiSession, assistantMessage, userMessage } from "pi-session";

const pi = PiSession.spawn(); // the binary: $PI_SESSION_BIN, else pi-session on PATH
pi.onHook("session_before_tree", async () => ({ summary: { summary: "Answered 4." } }));
pi.on("session_tree", (e) => console.log("moved to", e.newLeafId, "summary from hook:", e.fromExtension));
await pi.initialize({ deterministic: true });
const { sessionId } = await pi.session.create({ cwd: "/home/me/project", inMemory: true });
const question = await pi.session.append({ sessionId, entry: userMessage("What is 2+2?", { timestamp: 1 }) });
const answer = assistantMessage("4", { provider: "p", model: "m", timestamp: 2 }); // a typed entry, no type of yours
await pi.session.append({ sessionId, entry: answer });
const back = await pi.session.navigateTree({ sessionId, targetId: question.entryId, summarize: true });
console.log("editor text:", back.editorText);
await pi.dispose();
