import { $ } from './dom.js';

/**
 * The Copy buttons (`data-copy="#selector"`): a new key and its signing secret on the keys page,
 * the Playground's snippets and signed link. One listener on the document serves them all.
 */
export function startCopyButtons(): void {
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest('[data-copy]');
    if (!button) return;
    const source = $(button.getAttribute('data-copy') ?? '');
    if (!source) return;
    const text = 'value' in source && source.tagName !== 'CODE' ? String(source.value) : (source.textContent ?? '');
    const label = button.querySelector('span') ?? button;
    const original = label.textContent;
    const select = () => (source as Partial<HTMLInputElement>).select?.();
    copyText(text).then(
      () => {
        label.textContent = 'Copied';
        select();
        setTimeout(() => {
          label.textContent = original;
        }, 2000);
      },
      () => {
        select();
        label.textContent = 'Press Ctrl+C';
      },
    );
  });
}

/**
 * The clipboard API only exists in a secure context (HTTPS or localhost): elsewhere, the old way
 * through a hidden text area and execCommand.
 */
function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  return new Promise((resolve, reject) => {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    document.body.removeChild(area);
    if (ok) resolve();
    else reject(new Error('copy failed'));
  });
}
