import { $, $all } from './dom.js';
import { PLAYGROUND_KEY, tabStorage } from './tab-storage.js';

/**
 * The keys page's "Try it in the Playground" after a key is created: the new key goes into the
 * tab's storage, where the Playground's key field reads it (playground/api-key-field.ts).
 */
export function startUseKeyButtons(): void {
  $all('[data-use-key]').forEach((button) => {
    button.addEventListener('click', () => {
      const source = $<HTMLInputElement>(button.getAttribute('data-use-key') ?? '');
      const store = tabStorage();
      if (source && store) store.setItem(PLAYGROUND_KEY, source.value);
      window.location.href = '/dashboard/playground';
    });
  });
}
