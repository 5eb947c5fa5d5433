package org.les;

/**
 * One turn of a conversation for {@link LesModel#applyChatTemplate} ({@code les_chat_message}).
 * role: "system", "user", "assistant" (and "tool" where the template family has it). Immutable.
 */
public final class ChatMessage {
  public final String role;
  public final String content;

  /** A message; null role or content is refused by applyChatTemplate (INVALID_ARGUMENT). */
  public ChatMessage(String role, String content) {
    this.role = role;
    this.content = content;
  }

  public static ChatMessage system(String content) { return new ChatMessage("system", content); }
  public static ChatMessage user(String content) { return new ChatMessage("user", content); }
  public static ChatMessage assistant(String content) { return new ChatMessage("assistant", content); }
}
