/** JSON text columns (lists of tags and scopes). */
export const parseList = (text: string | null | undefined): string[] => (text ? (JSON.parse(text) as string[]) : []);
export const listText = (list: readonly string[]): string => JSON.stringify(list);
