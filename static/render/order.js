// Display order of parsed blocks (wire-format.md): UI blocks grouped where the first one stands, by priority.

/**
 * Every UI block (embedded ones too) is grouped where the first one is, sorted by `priority` ascending, those
 * without one after them in their order; other blocks keep their place. Pure: no DOM, runs in Node.
 */
export function displayOrder(blocks) {
  const ranked = blocks
    .map((block, index) => ({ block, index }))
    .filter(({ block }) => block.kind === 'ui')
    .sort((a, b) => rank(a) - rank(b) || (a.block.priority ?? 0) - (b.block.priority ?? 0) || a.index - b.index)
    .map(({ block }) => block);
  const ordered = [];
  let placed = false;
  for (const block of blocks) {
    if (block.kind !== 'ui') ordered.push(block);
    else if (!placed) {
      ordered.push(...ranked);
      placed = true;
    }
  }
  return ordered;
}

function rank({ block }) {
  return block.priority === null || block.priority === undefined ? 1 : 0;
}
