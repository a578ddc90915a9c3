/**
 * Driving the console with the keyboard alone, as a person without a mouse does: Tab and
 * Shift+Tab to a control (its focus must be visible on the way), and a check that Tab reaches
 * every control of a page.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

interface Focused {
  name: string;
  /** A ring is drawn: :focus-visible matches and the outline is not none or zero. */
  visible: boolean;
  index: string | null;
}

/** The focused element's accessible name (aria-label, its label, or its text). */
function focused(page: Page): Promise<Focused | null> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return null;
    const labels = (el as HTMLInputElement).labels;
    const name = el.getAttribute('aria-label') ?? (labels?.[0]?.textContent || el.textContent) ?? '';
    const style = getComputedStyle(el);
    const ring =
      el.matches(':focus-visible') && style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) > 0;
    return { name: name.trim().replace(/\s+/g, ' '), visible: ring, index: el.getAttribute('data-reach') };
  });
}

/** Presses Tab (Shift+Tab with `back`) until the control named `name` has the focus. */
export async function tabTo(page: Page, name: string | RegExp, options: { back?: boolean; max?: number } = {}) {
  const seen: string[] = [];
  for (let i = 0; i < (options.max ?? 80); i++) {
    await page.keyboard.press(options.back ? 'Shift+Tab' : 'Tab');
    const now = await focused(page);
    if (!now) continue;
    expect(now.visible, `the focus on "${now.name}" is not visible`).toBe(true);
    if (typeof name === 'string' ? now.name === name : name.test(now.name)) return;
    seen.push(now.name);
  }
  throw new Error(`Tab never reached "${name}"; it went through: ${seen.join(' | ')}`);
}

/**
 * Tabs through the whole page once and fails unless every visible, enabled control took the
 * focus, with a visible ring each time. Radio buttons count as one stop per group (arrows
 * move within it).
 */
export async function expectEveryControlReachable(page: Page): Promise<void> {
  const controls = await page.evaluate(() => {
    const selector =
      'a[href], button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea:not(:disabled), [tabindex]:not([tabindex="-1"]), [contenteditable="true"]';
    const radioGroups = new Set<string>();
    const names: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>(selector)) {
      if (el.getClientRects().length === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      if (el instanceof HTMLInputElement && el.type === 'radio') {
        if (!el.checked || radioGroups.has(el.name)) continue;
        radioGroups.add(el.name);
      }
      el.setAttribute('data-reach', String(names.length));
      names.push(el.getAttribute('aria-label') ?? el.textContent?.trim() ?? el.tagName);
    }
    return names;
  });
  const reached = new Set<string>();
  for (let i = 0; i < controls.length * 2 + 10 && reached.size < controls.length; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    if (!now?.index) continue;
    expect(now.visible, `the focus on "${now.name}" is not visible`).toBe(true);
    reached.add(now.index);
  }
  const missed = controls.filter((_, i) => !reached.has(String(i)));
  expect(missed, 'controls Tab never reached').toEqual([]);
}
