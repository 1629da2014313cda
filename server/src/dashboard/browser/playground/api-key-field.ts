import { required } from '../dom.js';
import { PLAYGROUND_KEY, tabStorage } from '../tab-storage.js';

/**
 * The Playground's key field: keys are shown only once, so the one pasted here is kept in the tab's
 * storage (never on the server) until Forget; the keys page can put a new one there too.
 */
export function startApiKeyField(keyInput: HTMLInputElement): void {
  const store = tabStorage();
  if (store && store.getItem(PLAYGROUND_KEY)) keyInput.value = store.getItem(PLAYGROUND_KEY) ?? '';
  keyInput.addEventListener('input', () => {
    if (!store) return;
    if (keyInput.value) store.setItem(PLAYGROUND_KEY, keyInput.value.trim());
    else store.removeItem(PLAYGROUND_KEY);
  });
  required('#pg-key-forget').addEventListener('click', () => {
    keyInput.value = '';
    if (store) store.removeItem(PLAYGROUND_KEY);
    keyInput.focus();
  });
}
