import { $all, required } from '../dom.js';

/**
 * The Playground's code tabs (curl / TypeScript), with the arrow keys moving between them as the
 * ARIA tabs pattern has it: only the selected tab is in the Tab order.
 */
export function startCodeTabs(): void {
  const tabs = $all('[role="tab"]');
  const select = (tab: HTMLElement) => {
    tabs.forEach((t) => {
      const selected = t === tab;
      t.setAttribute('aria-selected', String(selected));
      t.tabIndex = selected ? 0 : -1;
      required('#' + t.getAttribute('aria-controls')).hidden = !selected;
    });
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => {
      select(tab);
    });
    tab.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
      const next = tabs[(i + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length] as HTMLElement;
      select(next);
      next.focus();
    });
  });
}
