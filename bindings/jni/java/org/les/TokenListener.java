package org.les;

/**
 * Receives each generated token of {@link LesContext#generate}: its id and its text (whole UTF-8
 * characters: a character split across tokens arrives with the token that completes it, so
 * {@code text} may be empty; token is -1 for a final flush of held-back bytes). Called on the
 * thread that called generate(). Return false to stop
 * generation (generate() then returns normally). An exception thrown here stops generation and
 * propagates out of generate().
 */
@FunctionalInterface
public interface TokenListener {
  boolean onToken(int token, String text);
}
