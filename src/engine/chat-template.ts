/** One chat message as the API accepts it (text content, or an array of text parts). */
export interface ChatMessage {
  role: string;
  content: string | { type: string; text?: string }[] | null;
  name?: string;
}

/**
 * Renders chat messages to one prompt string before tokenizing. The template is deliberately simple and
 * model-neutral (the simulated engine has no chat training to match):
 *
 * ```text
 * <role>: <content>\n      (one line per message, in order)
 * assistant:               (the generation prompt)
 * ```
 * Array content joins its `text` parts; `null` content renders as empty.
 *
 * @example
 * ```ts
 * renderChatPrompt([{ role: "user", content: "hi" }]); // "user: hi\nassistant:"
 * ```
 */
export function renderChatPrompt(messages: readonly ChatMessage[]): string {
  const lines = messages.map((m) => `${m.role}: ${contentText(m.content)}`);
  lines.push("assistant:");
  return lines.join("\n");
}

function contentText(content: ChatMessage["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("");
}
