import { $all } from './dom.js';

/**
 * The dashboard's forms, on every page: the organization switcher submits on change; submit
 * buttons show progress and cannot be pressed twice (a second "Create key" would create a second
 * key); storage's "Test connection" says it is testing.
 */
export function startForms(): void {
  $all<HTMLSelectElement>('form[data-autosubmit] select').forEach((select) => {
    select.addEventListener('change', () => {
      select.form?.submit();
    });
  });
  // Coming back with the Back button restores the page as it was left: re-enable its buttons.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    $all<HTMLButtonElement>('button[aria-busy="true"]').forEach((button) => {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    });
  });
  $all<HTMLFormElement>('form[method="post"]').forEach((form) => {
    form.addEventListener('submit', () => {
      const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
      if (!button) return;
      // After the submit has started: a disabled button would not be sent with the form.
      setTimeout(() => {
        button.disabled = true;
        button.setAttribute('aria-busy', 'true');
        if (/test connection/i.test(button.textContent ?? '')) button.textContent = 'Testing…';
      }, 0);
    });
  });
}
