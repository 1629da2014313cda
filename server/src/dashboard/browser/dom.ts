/**
 * The few DOM helpers every part of the dashboard's script uses. The pages are rendered on the
 * server (server/src/dashboard/views), so the script looks elements up by selector; `required`
 * states that the page always renders that element, and names it when it does not.
 */

export function $<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E | null {
  return root.querySelector<E>(selector);
}

export function $all<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E[] {
  return Array.from(root.querySelectorAll<E>(selector));
}

export function required<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E {
  const element = root.querySelector<E>(selector);
  if (!element) throw new Error(`dashboard: no ${selector} on this page`);
  return element;
}

/** A form control's value: inputs, selects and text areas alike. */
export function valueOf(selector: string): string {
  return required<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(selector).value;
}

export function isChecked(selector: string): boolean {
  return required<HTMLInputElement>(selector).checked;
}
