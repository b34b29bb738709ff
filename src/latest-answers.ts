/**
 * `answer`, remembering its answers for the latest texts, at most `most` of them, all forgotten
 * at once when full: for texts that come again and again (a site's visitors' User-Agents, an
 * export's popups and domains), where a Map lookup costs less than the answer worked out afresh.
 */
export function rememberLatest<T>(most: number, answer: (text: string) => T): (text: string) => T {
  const answers = new Map<string, T>();
  return (text) => {
    let known = answers.get(text);
    if (known === undefined) {
      if (answers.size >= most) answers.clear();
      known = answer(text);
      answers.set(text, known);
    }
    return known;
  };
}
