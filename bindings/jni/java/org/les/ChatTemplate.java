package org.les;

/**
 * Which chat template {@link LesModel#applyChatTemplate} uses ({@code les_chat_template_resolve}):
 * the family's canonical name and where it comes from. Immutable.
 */
public final class ChatTemplate {
  /** The caller named the family. */
  public static final int SOURCE_NAMED = 0;
  /** Recognised from the model's tokenizer.chat_template. */
  public static final int SOURCE_MODEL = 1;
  /** The model has no template: chatml. */
  public static final int SOURCE_FALLBACK = 2;

  /** Canonical family name ("chatml", "llama3", ...). */
  public final String name;
  /** SOURCE_NAMED, SOURCE_MODEL or SOURCE_FALLBACK. */
  public final int source;

  ChatTemplate(String name, int source) {
    this.name = name;
    this.source = source;
  }

  @Override
  public String toString() {
    return name + (source == SOURCE_MODEL ? " (model)" : source == SOURCE_FALLBACK ? " (fallback)" : " (named)");
  }
}
