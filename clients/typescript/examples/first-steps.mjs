import { PiSession, assistantMessage, userMessage } from "pi-session";

const pi = PiSession.spawn(); // the binary npm installed for this platform ($PI_SESSION_BIN overrides)
pi.onHook("session_before_tree", () => ({ summary: { summary: "Asked 2+2, got 4." } }));
await pi.initialize();
const { sessionId } = await pi.session.create({ cwd: process.cwd(), inMemory: true });
const asked = await pi.session.append({ sessionId, entry: userMessage("What is 2+2?") });
await pi.session.append({
  sessionId,
  entry: assistantMessage("4", { provider: "anthropic", model: "claude-sonnet-4-5" }),
});
const back = await pi.session.navigateTree({ sessionId, targetId: asked.entryId, summarize: true });
console.log(back.editorText, "|", back.summaryEntry.summary);
await pi.dispose();
