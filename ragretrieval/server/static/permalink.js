// A question's permalink, #q=<question id> (the compare page and an evaluation's cards): the question is scrolled
// to and marked; when it is on another page of the list, the server is asked for the page that holds it (?q=ID).
const show = () => {
  if (!location.hash.startsWith("#q=")) return;
  const id = decodeURIComponent(location.hash.slice(3));
  const target = document.getElementById(`q=${id}`);
  if (target) {
    document.querySelectorAll(".permalink-target").forEach((el) => el.classList.remove("permalink-target"));
    target.classList.add("permalink-target");
    target.scrollIntoView({ block: "start" });
    return;
  }
  const url = new URL(location.href);
  if (url.searchParams.get("q") === id) return; // asked already: the question is not among those shown
  if (url.pathname !== "/compare") url.search = ""; // an evaluation's cards: in question order, unfiltered
  url.searchParams.set("q", id);
  url.searchParams.delete("page");
  location.replace(url.toString());
};
window.addEventListener("hashchange", show);
show();
