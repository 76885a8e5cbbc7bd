// The visible text of the page and its title, in one round trip.
() => {
  const root = document.body || document.documentElement;
  return [root ? root.innerText : '', document.title];
}
